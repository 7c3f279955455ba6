#pragma once

#include <cstdint>
#include <string>

namespace gleaner::server {

// Who is calling, once authenticated: on the Unix socket the kernel says
// (SO_PEERCRED); over TCP, the token's owner.
struct Caller {
  uint32_t uid = 0;
  std::string user;
  bool by_token = false;
  bool admin() const { return uid == 0; }
};

}  // namespace gleaner::server
