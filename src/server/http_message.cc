#include "server/http_message.h"

#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "core/civil_time.h"
#include "net/http_date.h"

namespace gleaner::server {

PassedDescriptor::~PassedDescriptor() {
  if (fd >= 0) close(fd);
}

namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// A header field name is a token (RFC 9110 5.1): no spaces, no controls.
// "Content-Length : 5" must not pass as another header.
bool IsToken(std::string_view name) {
  if (name.empty()) return false;
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 32 || c >= 127 || std::strchr("\"(),/:;<=>?@[\\]{}", c) != nullptr) return false;
  }
  return true;
}

ParsedRequest Error(int status, std::string message) {
  ParsedRequest p;
  p.kind = ParsedRequest::Kind::kError;
  p.error_status = status;
  p.error = std::move(message);
  return p;
}

}  // namespace

ParsedRequest ParseRequest(std::string_view received) {
  // 0x16 opens a TLS handshake record; no request line starts with it.
  if (!received.empty() && received[0] == '\x16') {
    return Error(400, "this port speaks plain HTTP, not TLS: use http:// for it");
  }
  const size_t header_end = received.find("\r\n\r\n");
  if (header_end == std::string_view::npos) {
    if (received.size() > kMaxHeaderBytes) {
      return Error(431, "request headers larger than 16 KiB");
    }
    return {};
  }
  if (header_end + 4 > kMaxHeaderBytes) return Error(431, "request headers larger than 16 KiB");
  HttpRequest req;
  std::string_view head = received.substr(0, header_end);
  const auto next_line = [&head]() {
    const size_t eol = head.find("\r\n");
    const std::string_view line = head.substr(0, eol);
    head = eol == std::string_view::npos ? std::string_view() : head.substr(eol + 2);
    return line;
  };
  const std::string_view request_line = next_line();
  const size_t sp1 = request_line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : request_line.find(' ', sp1 + 1);
  const auto malformed = [&] {
    return Error(400,
                 "malformed request line \"" + std::string(request_line.substr(0, 200)) + "\"");
  };
  if (sp2 == std::string_view::npos) return malformed();
  req.method = std::string(request_line.substr(0, sp1));
  req.path = std::string(request_line.substr(sp1 + 1, sp2 - sp1 - 1));
  const std::string_view version = request_line.substr(sp2 + 1);
  if (!IsToken(req.method) || version.size() != 8 || !version.starts_with("HTTP/1.")) {
    return malformed();
  }
  // Origin form only: "http://host/x" or "x" would be served as a path.
  if (req.path.empty() || req.path[0] != '/') {
    return Error(400, "the request target must be a path starting with /");
  }
  for (const char ch : req.path) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 32 || c == 127) return Error(400, "the request target holds a control character");
  }
  while (!head.empty()) {
    const std::string_view line = next_line();
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) {
      return Error(400, "malformed header \"" + std::string(line.substr(0, 200)) + "\"");
    }
    const std::string name = Lower(line.substr(0, colon));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    auto [it, inserted] = req.headers.emplace(name, std::string(value));
    if (!inserted) {
      // Two lengths are the classic smuggling shape; other repeats join.
      if (name == "content-length" || name == "host") {
        return Error(400, "the " + name + " header appears twice");
      }
      it->second += ", " + std::string(value);
    }
  }
  if (req.headers.contains("transfer-encoding")) {
    // Not read here; ignoring it would take the body for the next request.
    return Error(501, "Transfer-Encoding is not supported; send the body with Content-Length");
  }
  size_t length = 0;
  if (auto it = req.headers.find("content-length"); it != req.headers.end()) {
    const std::string& v = it->second;
    if (v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos) {
      return Error(400, "Content-Length is not a whole number of bytes");
    }
    const unsigned long long n = std::strtoull(v.c_str(), nullptr, 10);
    if (n > kMaxBodyBytes) return Error(413, "request body larger than 1 MiB");
    length = static_cast<size_t>(n);
  }
  const std::string_view body = received.substr(header_end + 4);
  if (body.size() < length) return {};
  req.body = std::string(body.substr(0, length));
  const auto connection = req.headers.find("connection");
  const std::string wants = connection == req.headers.end() ? "" : Lower(connection->second);
  req.keep_alive = version == "HTTP/1.1" ? wants.find("close") == std::string::npos
                                         : wants.find("keep-alive") != std::string::npos;
  ParsedRequest done;
  done.kind = ParsedRequest::Kind::kComplete;
  done.consumed = header_end + 4 + length;
  done.request = std::move(req);
  return done;
}

namespace {

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 413:
      return "Payload Too Large";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    default:
      return "Internal Server Error";
  }
}

}  // namespace

std::string FormatResponse(const HttpResponse& r, bool keep_alive) {
  // Every answer is dated; the text changes once a second, so each worker
  // formats it once a second.
  thread_local time_t dated = -1;
  thread_local std::string date;
  if (const time_t now = std::time(nullptr); now != dated) {
    dated = now;
    date = net::FormatHttpDate(core::FromUnixMicros(static_cast<int64_t>(now) * 1000000));
  }
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) +
                    "\r\nDate: " + date + "\r\nContent-Type: " + r.content_type +
                    "\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\n";
  for (const auto& [name, value] : r.headers) out += name + ": " + value + "\r\n";
  out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  out += r.body;
  return out;
}

HttpResponse ErrorResponse(const core::Status& s) {
  int status = 500;
  switch (s.code()) {
    case core::StatusCode::kInvalidArgument:
      status = 400;
      break;
    case core::StatusCode::kUnauthenticated:
      status = 401;
      break;
    case core::StatusCode::kPermissionDenied:
      status = 403;
      break;
    case core::StatusCode::kNotFound:
      status = 404;
      break;
    case core::StatusCode::kFailedPrecondition:
      status = 409;
      break;
    case core::StatusCode::kUnavailable:
      status = 503;
      break;
    case core::StatusCode::kResourceExhausted:
      status = 429;
      break;
    default:
      status = 500;
  }
  nlohmann::json j = {
      {"error", {{"code", core::StatusCodeName(s.code())}, {"message", s.message()}}}};
  return {status, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

}  // namespace gleaner::server
