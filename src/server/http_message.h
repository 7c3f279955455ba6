#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace gleaner::server {

// One HTTP/1.1 request, as read from a connection.
struct HttpRequest {
  std::string method;                          // "GET", "POST"
  std::string path;                            // "/v1/jobs/7"
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string body;  // JSON, unless content_type says otherwise
  std::string content_type = "application/json";
  // More header lines, {name, value}: the dashboard's security policy.
  std::vector<std::pair<std::string, std::string>> headers = {};
};

// Limits that keep a bad client from exhausting memory.
inline constexpr size_t kMaxHeaderBytes = 16 * 1024;
inline constexpr size_t kMaxBodyBytes = 1024 * 1024;

// Reads one request from `fd`, all of it within `budget`. Errors are what
// to answer: kInvalidArgument → 400, and an oversized request → 413
// (kFailedPrecondition); kUnavailable when the peer went away or was too
// slow (nothing is answered then).
core::Result<HttpRequest> ReadRequest(int fd,
                                      std::chrono::milliseconds budget = std::chrono::seconds(10));

// Writes `response` with its content type and closes nothing.
void WriteResponse(int fd, const HttpResponse& response);

// {"error": {"code": ..., "message": ...}} with the status for `status`.
HttpResponse ErrorResponse(const core::Status& status);

}  // namespace gleaner::server
