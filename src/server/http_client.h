#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "core/result.h"
#include "core/units.h"

namespace gleaner::server {

// Where a client finds gleaner's API: the Unix socket of a local `gleaner
// up` (the kernel tells it who we are), or an HTTP address (a token does).
struct Endpoint {
  std::string unix_path;  // set for a Unix socket
  std::string host;
  uint16_t port = 0;

  std::string ToString() const;
};

// "http://127.0.0.1:7380" (a trailing "/" allowed) or "unix:/path/gleaner.sock".
core::Result<Endpoint> ParseServerUrl(const std::string& url);

// One request; the answer's status and body. `token`, when set, goes as
// "Authorization: Bearer". kUnavailable when the server cannot be reached
// or does not answer within `timeout` (for connecting, and for each read
// or write).
core::Result<std::pair<int, std::string>> HttpCall(const Endpoint& endpoint,
                                                   const std::string& method,
                                                   const std::string& target,
                                                   const std::string& body,
                                                   const std::string& token = "",
                                                   core::Duration timeout = core::Seconds(30));

}  // namespace gleaner::server
