#pragma once

#include <memory>
#include <string>

#include "core/result.h"

namespace gleaner::store {

// Which of the `gleaner server`s sharing a store leads: the one holding its
// lease. On PostgreSQL the lease is a session advisory lock on a connection
// of its own, so the server releases it the moment a leader's process dies
// (the kernel closes its socket) and a standby takes it on its next Hold.
// On a SQLite file it is a flock(2) beside the database: one host, one
// leader. Not thread-safe.
class LeaderLease {
 public:
  virtual ~LeaderLease() = default;
  // Takes the lease if it is free, and says whether this process holds it
  // now. Call every fraction of a second: a leader whose hold broke (its
  // connection to PostgreSQL was lost) learns it here, and must stop
  // leading at once.
  virtual core::Result<bool> Hold() = 0;
};

// The lease for the store `where` names (as OpenStore takes it).
core::Result<std::unique_ptr<LeaderLease>> OpenLeaderLease(const std::string& where);

}  // namespace gleaner::store
