#include "store/join_token_check.h"

#include "core/civil_time.h"

namespace gleaner::store {

core::Status CheckJoinToken(const std::optional<StoredJoinToken>& token, const std::string& host,
                            core::TimePoint now, int64_t generation) {
  const std::string ask = "; ask an admin for a new one (gleaner agent-token create --host " + host;
  if (!token) return core::Unauthenticated("unknown join token" + ask + ")");
  if (token->used_at) {
    return core::Unauthenticated("this join token was used at " + core::Rfc3339(*token->used_at) +
                                 " and joins once" + ask + ")");
  }
  if (now >= token->expires_at) {
    return core::Unauthenticated("this join token expired at " + core::Rfc3339(token->expires_at) +
                                 ask + ")");
  }
  if (token->host != host) {
    return core::Unauthenticated("this join token is for host " + token->host + ", not " + host +
                                 "; run the agent with --name " + token->host + ask + ")");
  }
  if (generation > 0 && !token->replace) {
    return core::Unauthenticated(
        "host " + host + " has joined already, and this token may not take its place" + ask +
        " --replace, which cuts off the agent that holds its credential now)");
  }
  return core::Status::Ok();
}

}  // namespace gleaner::store
