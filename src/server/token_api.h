#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/mutex.h"
#include "server/caller.h"
#include "server/http_message.h"
#include "store/store.h"

namespace gleaner::server {

// The longest name (and user name) a token request may give.
inline constexpr size_t kMaxTokenNameBytes = 256;

// A new token's secret: `prefix` and 64 hex digits from the kernel's
// CSPRNG. API tokens start "glt_", agents' join tokens "gjt_".
core::Result<std::string> NewTokenSecret(std::string_view prefix = "glt_");

// API tokens (docs/api.md), for clients that reach gleaner over TCP:
//   POST /v1/tokens             {"name": ..., "user": ...}: a token for the caller (root may
//                               name another user); the secret is in the answer, once
//   GET  /v1/tokens             the caller's tokens (every token, for root); never secrets
//   POST /v1/tokens/ID/revoke   the caller's own token (any, for root)
//   POST /v1/agent-tokens       {"host": NAME, "replace": false, "hours": 24}: a one-time
//                               token for an agent to join as NAME (docs/cluster.md); admins
//                               only (root, or the user the daemon runs as)
// Tokens are created only on the Unix socket, where the kernel vouches for
// the caller: a token cannot mint more tokens that would outlive it. Every
// token expires (TokenPolicy); a root token may submit only where the
// policy allows it, since over TCP its holder could run jobs as root: by
// default root's tokens read, approve and administer.
// Thread-safe: `store_mu` guards the store.
struct TokenPolicy {
  bool allow_root = false;                              // [api] allow_root_tokens
  core::Duration lifetime = core::Seconds(90 * 86400);  // [api] token_lifetime_days
};

class TokenApi {
 public:
  // `uid_of` finds a local user's uid by name.
  TokenApi(store::Store& tokens, core::Mutex& store_mu, const core::Clock& clock,
           std::function<std::optional<uint32_t>(const std::string&)> uid_of, TokenPolicy policy)
      : tokens_(tokens),
        store_mu_(store_mu),
        clock_(clock),
        uid_of_(std::move(uid_of)),
        policy_(policy) {}

  // `request.path` starts with /v1/tokens.
  HttpResponse Handle(const HttpRequest& request, const Caller& caller);
  // POST /v1/agent-tokens.
  HttpResponse CreateJoinToken(const HttpRequest& request, const Caller& caller);

  // Who a bearer token speaks for; kUnauthenticated when nobody.
  core::Result<Caller> Authenticate(const std::string& secret);

 private:
  HttpResponse Create(const HttpRequest& request, const Caller& caller);

  // The tokens, and the history of their creation and revocation.
  store::Store& tokens_ GLEANER_GUARDED_BY(store_mu_);
  core::Mutex& store_mu_;
  const core::Clock& clock_;
  std::function<std::optional<uint32_t>(const std::string&)> uid_of_;
  TokenPolicy policy_;
};

}  // namespace gleaner::server
