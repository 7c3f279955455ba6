#pragma once

// Internal to the store backends: whether a stored join token may be
// spent, the same words on every backend.

#include <optional>
#include <string>

#include "core/status.h"
#include "core/units.h"

namespace gleaner::store {

// A join token's row, read in the spend's transaction.
struct StoredJoinToken {
  std::string host;
  bool replace = false;
  core::TimePoint expires_at;
  std::optional<core::TimePoint> used_at;
};

// OK when `token` (nullopt: no such digest) may make `host`, now at
// `generation`, join at `now`; otherwise kUnauthenticated saying why.
core::Status CheckJoinToken(const std::optional<StoredJoinToken>& token, const std::string& host,
                            core::TimePoint now, int64_t generation);

}  // namespace gleaner::store
