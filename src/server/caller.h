#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gleaner::server {

// The uid an anonymous reader gets: (uid_t)-1 is nobody's, so it owns no
// job and matches no token.
inline constexpr uint32_t kAnonymousUid = 0xFFFFFFFF;

// What a token may do (docs/api.md): read (GET), submit (jobs, and what
// their owners do to them), approve (approve and deny), admin (root's
// powers, for a root token). A caller on the Unix socket may do all.
enum Scope : uint8_t { kScopeRead = 1, kScopeSubmit = 2, kScopeApprove = 4, kScopeAdmin = 8 };
inline constexpr uint8_t kAllScopes = kScopeRead | kScopeSubmit | kScopeApprove | kScopeAdmin;
// What a root token may do unless [api] allow_root_tokens: everything but
// submit, so that no token starts a job as root.
inline constexpr uint8_t kRootTokenScopes = kScopeRead | kScopeApprove | kScopeAdmin;

// Who is calling, once authenticated: on the Unix socket the kernel says
// (SO_PEERCRED); over TCP, the token's owner, within its scopes and
// projects; or, where the site allows it ([ui] anonymous_read), an
// anonymous reader of the read-only routes.
struct Caller {
  uint32_t uid = 0;
  std::string user;
  bool by_token = false;
  bool anonymous = false;
  uint8_t scopes = kAllScopes;
  std::vector<std::string> projects{};  // the only ones it may act for; empty: any

  bool admin() const { return !anonymous && uid == 0 && (scopes & kScopeAdmin) != 0; }
  bool May(Scope s) const { return (scopes & s) != 0; }
  bool ActsFor(const std::string& project) const {
    return projects.empty() ||
           std::find(projects.begin(), projects.end(), project) != projects.end();
  }
};

// "read,submit" <-> the scopes; nullopt for a name that is none.
std::optional<uint8_t> ParseScopes(const std::vector<std::string>& names);
std::vector<std::string> ScopeNames(uint8_t scopes);

}  // namespace gleaner::server
