#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace gleaner::server {

// Writes the first bytes of `data` that the Unix stream socket `socket`
// takes now (it may be non-blocking), the descriptor `fd` travelling with
// them (SCM_RIGHTS); how many. The rest is the caller's to write.
core::Result<size_t> SendWithDescriptor(int socket, std::string_view data, int fd);

// An answer that may carry a descriptor.
struct AnswerWithDescriptor {
  int status = 0;
  std::string body;
  int fd = -1;  // the caller's to close; -1: none came
};

// Calls `method path` (no body) on the API's Unix socket `socket_path` on a
// connection of its own, closed after the answer, and receives whatever
// descriptor the answer carries (close-on-exec). Fails on a socket that
// cannot be reached or an answer that is not HTTP.
core::Result<AnswerWithDescriptor> CallForDescriptor(const std::string& socket_path,
                                                     const std::string& method,
                                                     const std::string& path);

}  // namespace gleaner::server
