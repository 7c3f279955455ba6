#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/units.h"

namespace gleaner::store {

// An API token: who it speaks for. The secret itself is never stored, only
// its SHA-256, so reading the database does not let anyone in.
struct TokenRecord {
  int64_t id = 0;
  std::string user;
  uint32_t uid = 0;
  std::string name;  // what its owner calls it: "laptop", "ci"
  core::TimePoint created_at;
  std::optional<core::TimePoint> revoked_at;
  // After this the token no longer works; nullopt: tokens made before
  // tokens expired, which never do.
  std::optional<core::TimePoint> expires_at;

  bool operator==(const TokenRecord&) const = default;
};

class TokenStore {
 public:
  virtual ~TokenStore() = default;
  // Saves `token` (its id is assigned) under the secret's digest.
  virtual core::Result<TokenRecord> AddToken(const TokenRecord& token,
                                             const std::string& sha256) = 0;
  // The live token with this digest; kNotFound when unknown or revoked.
  virtual core::Result<TokenRecord> FindToken(const std::string& sha256) = 0;
  // Every token, revoked ones included, oldest first.
  virtual core::Result<std::vector<TokenRecord>> ListTokens() = 0;
  // kNotFound when there is no live token `id`.
  virtual core::Status RevokeToken(int64_t id, core::TimePoint now) = 0;
};

}  // namespace gleaner::store
