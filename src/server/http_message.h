#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/units.h"

namespace gleaner::server {

// One HTTP/1.1 request, as read from a connection.
struct HttpRequest {
  std::string method;                          // "GET", "POST"
  std::string path;                            // "/v1/jobs/7"
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  // HTTP/1.1 without "Connection: close", or HTTP/1.0 with
  // "Connection: keep-alive": the client may send another request on the
  // same connection.
  bool keep_alive = true;
};

struct HttpResponse;
// An answer that comes later (a long poll). The server holds the
// connection, costing no worker thread, until `wait` answers through the
// function it is given (from any thread, at most once counts) or `limit`
// passes; then it answers `on_timeout`.
struct LaterResponse {
  core::Duration limit;
  std::function<void(std::function<void(HttpResponse)> answer)> wait;
};

// A descriptor an answer hands the client along with it (SCM_RIGHTS, on a
// Unix socket only): an interactive session's terminal. Closed here once
// the answer is sent, or dropped unsent.
struct PassedDescriptor {
  explicit PassedDescriptor(int descriptor) : fd(descriptor) {}
  ~PassedDescriptor();
  PassedDescriptor(const PassedDescriptor&) = delete;
  PassedDescriptor& operator=(const PassedDescriptor&) = delete;
  int fd;
};

struct HttpResponse {
  int status = 200;
  std::string body;  // JSON, unless content_type says otherwise
  std::string content_type = "application/json";
  // More header lines, {name, value}: the dashboard's security policy.
  std::vector<std::pair<std::string, std::string>> headers = {};
  // Set for an answer that comes later: this response is then the one sent
  // when `later->limit` passes first.
  std::shared_ptr<LaterResponse> later = nullptr;
  std::shared_ptr<PassedDescriptor> descriptor = nullptr;
};

// Limits that keep a bad client from exhausting memory.
inline constexpr size_t kMaxHeaderBytes = 16 * 1024;
inline constexpr size_t kMaxBodyBytes = 1024 * 1024;

// What the bytes received so far on a connection amount to.
struct ParsedRequest {
  enum class Kind { kIncomplete, kComplete, kError };
  Kind kind = Kind::kIncomplete;
  HttpRequest request;   // kComplete
  size_t consumed = 0;   // kComplete: the request's bytes; what follows is the next one
  int error_status = 0;  // kError: 400 malformed, 413 body or 431 headers too
                         // large, 501 Transfer-Encoding
  std::string error;     // kError: what was wrong, for the client
};

// Parses one HTTP/1.1 request from the start of `received` (pure; never
// throws). Strict where leniency lets requests be read two ways: CRLF line
// ends, a path target, token header names, one digits-only Content-Length,
// no Transfer-Encoding. Bytes past the body belong to the next request. A
// TLS handshake sent to a plain port is an error at its first byte, so the
// client hears at once that it should use http://.
ParsedRequest ParseRequest(std::string_view received);

// The bytes of `response` on the wire: status line, headers (a Date, as
// every origin server with a clock sends: clients compare it with their
// own), body, and "Connection: keep-alive" or "close".
std::string FormatResponse(const HttpResponse& response, bool keep_alive = false);

// {"error": {"code": ..., "message": ...}} with the status for `status`.
HttpResponse ErrorResponse(const core::Status& status);

}  // namespace gleaner::server
