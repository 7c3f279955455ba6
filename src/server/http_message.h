#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
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

// What the bytes received so far on a connection amount to.
struct ParsedRequest {
  enum class Kind { kIncomplete, kComplete, kError };
  Kind kind = Kind::kIncomplete;
  HttpRequest request;   // kComplete
  int error_status = 0;  // kError: 400 malformed, 413 body or 431 headers too
                         // large, 501 Transfer-Encoding
  std::string error;     // kError: what was wrong, for the client
};

// Parses one HTTP/1.1 request from the start of `received` (pure; never
// throws). Strict where leniency lets requests be read two ways: CRLF line
// ends, a path target, token header names, one digits-only Content-Length,
// no Transfer-Encoding. Bytes past the body are ignored (one request per
// connection).
ParsedRequest ParseRequest(std::string_view received);

// The bytes of `response` on the wire: status line, headers, body.
std::string FormatResponse(const HttpResponse& response);

// Writes `response` with its content type and closes nothing.
void WriteResponse(int fd, const HttpResponse& response);

// {"error": {"code": ..., "message": ...}} with the status for `status`.
HttpResponse ErrorResponse(const core::Status& status);

}  // namespace gleaner::server
