#pragma once

#include <cstdint>
#include <string>

namespace gleaner::server {

// The uid an anonymous reader gets: (uid_t)-1 is nobody's, so it owns no
// job and matches no token.
inline constexpr uint32_t kAnonymousUid = 0xFFFFFFFF;

// Who is calling, once authenticated: on the Unix socket the kernel says
// (SO_PEERCRED); over TCP, the token's owner; or, where the site allows
// it ([ui] anonymous_read), an anonymous reader of the read-only routes.
struct Caller {
  uint32_t uid = 0;
  std::string user;
  bool by_token = false;
  bool anonymous = false;
  bool admin() const { return !anonymous && uid == 0; }
};

}  // namespace gleaner::server
