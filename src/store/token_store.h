#pragma once

#include <map>
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
  // What it may do: "read", "submit", "approve", "admin" (nullopt: all,
  // as tokens made before scopes may), and the projects it may submit
  // to and approve for (empty: any).
  std::optional<std::vector<std::string>> scopes;
  std::vector<std::string> projects;

  bool operator==(const TokenRecord&) const = default;
};

// A one-time token that lets an agent join the cluster as `host`
// (docs/cluster.md). Like an API token, only its secret's SHA-256 is kept.
struct JoinToken {
  std::string host;
  core::TimePoint created_at;
  core::TimePoint expires_at;
  // May take the place of a host of that name that has joined already
  // (its credential stops working): an admin's deliberate act.
  bool replace = false;
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

  virtual core::Status AddJoinToken(const JoinToken& token, const std::string& sha256) = 0;
  // Spends the join token with this digest as `host`, once: the host's new
  // generation (1 at its first join), which its credential carries, so
  // every earlier credential of `host` stops working. kUnauthenticated,
  // saying why, when the token is unknown, spent, expired or for another
  // host, or when `host` has joined already and the token may not replace
  // it. Two coordinators spending one token: one succeeds.
  virtual core::Result<int64_t> SpendJoinToken(const std::string& sha256, const std::string& host,
                                               core::TimePoint now) = 0;
  // `host`'s generation: how many times it has joined with a token (0:
  // never).
  virtual core::Result<int64_t> AgentGeneration(const std::string& host) = 0;
  // Every joined host's generation, in one read.
  virtual core::Result<std::map<std::string, int64_t>> AgentGenerations() = 0;
};

}  // namespace gleaner::store
