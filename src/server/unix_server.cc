#include "server/unix_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gleaner::server {
namespace {

core::Result<sockaddr_un> Address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return core::InvalidArgument("socket path too long (over 107 bytes): " + path +
                                 "; choose a shorter --data-dir");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

void SetTimeouts(int fd, int seconds) {
  timeval tv{seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

}  // namespace

core::Result<std::unique_ptr<UnixServer>> UnixServer::Start(const std::string& path,
                                                            Handler handler) {
  GLEANER_ASSIGN_OR_RETURN(sockaddr_un addr, Address(path));
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return core::Unavailable(std::string("socket: ") + std::strerror(errno));
  unlink(path.c_str());  // a socket left by a gleaner that was killed
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      chmod(path.c_str(), 0666) != 0 || listen(fd, 64) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    return core::Unavailable("cannot serve on " + path + ": " + why);
  }
  return std::unique_ptr<UnixServer>(new UnixServer(fd, path, std::move(handler)));
}

UnixServer::UnixServer(int fd, std::string path, Handler handler)
    : fd_(fd), path_(std::move(path)), handler_(std::move(handler)) {
  thread_ = std::thread([this] { Serve(); });
}

UnixServer::~UnixServer() {
  stop_ = true;
  thread_.join();
  close(fd_);
  unlink(path_.c_str());
}

void UnixServer::Serve() {
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 100) != 1) continue;
    const int client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    SetTimeouts(client, 5);
    ucred cred{};
    socklen_t len = sizeof cred;
    if (getsockopt(client, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      close(client);
      continue;
    }
    auto request = ReadRequest(client);
    if (request.ok()) {
      WriteResponse(client, handler_(*request, cred.uid));
    } else if (request.status().code() != core::StatusCode::kUnavailable) {
      HttpResponse r = ErrorResponse(request.status());
      if (request.status().code() == core::StatusCode::kFailedPrecondition) r.status = 413;
      WriteResponse(client, r);
    }
    close(client);
  }
}

core::Result<std::pair<int, std::string>> UnixRequest(const std::string& path,
                                                      const std::string& method,
                                                      const std::string& target,
                                                      const std::string& body) {
  GLEANER_ASSIGN_OR_RETURN(sockaddr_un addr, Address(path));
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return core::Unavailable(std::string("socket: ") + std::strerror(errno));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    return core::Unavailable("cannot reach gleaner at " + path + ": " + why +
                             " (is `gleaner up` running?)");
  }
  SetTimeouts(fd, 30);
  const std::string request =
      method + " " + target + " HTTP/1.1\r\nHost: gleaner\r\n" +
      "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n\r\n" + body;
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    // The server may have answered early (a request too large) and closed:
    // stop sending and read what it said.
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string response;
  char buf[4096];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof buf, 0)) > 0) response.append(buf, static_cast<size_t>(n));
  close(fd);
  int status = 0;
  if (std::sscanf(response.c_str(), "HTTP/1.1 %d", &status) != 1) {
    return core::Unavailable("no answer from gleaner at " + path);
  }
  const size_t body_at = response.find("\r\n\r\n");
  return std::pair{status, body_at == std::string::npos ? "" : response.substr(body_at + 4)};
}

}  // namespace gleaner::server
