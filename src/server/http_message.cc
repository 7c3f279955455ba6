#include "server/http_message.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>

namespace gleaner::server {

namespace {

// Waits for data until the request's deadline: a client that trickles its
// request a byte at a time cannot hold a worker longer than the deadline.
core::Status AwaitData(int fd, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return core::Unavailable("the client was too slow to send its request");
    pollfd p{fd, POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(left.count()));
    if (r > 0) return core::Status::Ok();
    if (r < 0 && errno != EINTR) return core::Unavailable("poll failed");
  }
}

}  // namespace

core::Result<HttpRequest> ReadRequest(int fd, std::chrono::milliseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  std::string data;
  char buf[4096];
  size_t header_end = std::string::npos;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    if (data.size() > kMaxHeaderBytes) {
      return core::FailedPrecondition("request headers larger than 16 KiB");
    }
    GLEANER_RETURN_IF_ERROR(AwaitData(fd, deadline));
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return core::Unavailable("the client closed the connection");
    data.append(buf, static_cast<size_t>(n));
  }
  HttpRequest req;
  std::istringstream head(data.substr(0, header_end));
  std::string line;
  if (!std::getline(head, line)) return core::InvalidArgument("empty request");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::istringstream first(line);
  std::string version;
  if (!(first >> req.method >> req.path >> version) || version.rfind("HTTP/1.", 0) != 0) {
    return core::InvalidArgument("malformed request line \"" + line + "\"");
  }
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t colon = line.find(':');
    if (colon == std::string::npos)
      return core::InvalidArgument("malformed header \"" + line + "\"");
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    size_t v = colon + 1;
    while (v < line.size() && line[v] == ' ') ++v;
    req.headers[name] = line.substr(v);
  }
  size_t length = 0;
  if (auto it = req.headers.find("content-length"); it != req.headers.end()) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(it->second.c_str(), &end, 10);
    if (errno != 0 || end == it->second.c_str() || *end != '\0') {
      return core::InvalidArgument("Content-Length is not a number");
    }
    if (n > kMaxBodyBytes) return core::FailedPrecondition("request body larger than 1 MiB");
    length = static_cast<size_t>(n);
  }
  req.body = data.substr(header_end + 4);
  while (req.body.size() < length) {
    GLEANER_RETURN_IF_ERROR(AwaitData(fd, deadline));
    const ssize_t n = recv(fd, buf, std::min(sizeof buf, length - req.body.size()), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return core::InvalidArgument("the body is shorter than its Content-Length");
    req.body.append(buf, static_cast<size_t>(n));
  }
  req.body.resize(length);
  return req;
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
    case 503:
      return "Service Unavailable";
    default:
      return "Internal Server Error";
  }
}

}  // namespace

void WriteResponse(int fd, const HttpResponse& r) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) +
                    "\r\nContent-Type: " + r.content_type +
                    "\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\n";
  for (const auto& [name, value] : r.headers) out += name + ": " + value + "\r\n";
  out += "Connection: close\r\n\r\n" + r.body;
  size_t sent = 0;
  while (sent < out.size()) {
    const ssize_t n = send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
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
    default:
      status = 500;
  }
  nlohmann::json j = {
      {"error", {{"code", core::StatusCodeName(s.code())}, {"message", s.message()}}}};
  return {status, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

}  // namespace gleaner::server
