#include "server/http_client.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "server/socket_address.h"

namespace gleaner::server {

std::string Endpoint::ToString() const {
  return unix_path.empty() ? "http://" + FormatHostPort(host, port) : "unix:" + unix_path;
}

core::Result<Endpoint> ParseServerUrl(const std::string& url) {
  Endpoint e;
  if (url.rfind("unix:", 0) == 0) {
    e.unix_path = url.substr(5);
    if (e.unix_path.empty()) return core::InvalidArgument("unix: needs a socket path");
    return e;
  }
  if (url.rfind("https://", 0) == 0) {
    return core::InvalidArgument(
        "gleaner speaks plain HTTP; put TLS in a reverse proxy in front of it, or reach it "
        "through an SSH tunnel (see docs/api.md)");
  }
  if (url.rfind("http://", 0) != 0) {
    return core::InvalidArgument("\"" + url +
                                 "\" is not a server URL: use http://HOST:PORT or unix:PATH");
  }
  std::string rest = url.substr(7);
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  GLEANER_ASSIGN_OR_RETURN(auto host_port, ParseHostPort(rest));
  e.host = host_port.first;
  e.port = host_port.second;
  return e;
}

core::Result<std::pair<int, std::string>> HttpCall(
    const Endpoint& endpoint, const std::string& method, const std::string& target,
    const std::string& body, const std::string& token, core::Duration timeout) {
  // Linux honours SO_SNDTIMEO in connect(): a host that does not answer
  // costs `timeout`, not the kernel's minutes of SYN retries.
  timeval tv{static_cast<time_t>(timeout.count() / 1'000'000),
             static_cast<suseconds_t>(timeout.count() % 1'000'000)};
  const auto with_timeouts = [&tv](int s) {
    if (s >= 0) {
      setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    }
    return s;
  };
  int fd = -1;
  if (!endpoint.unix_path.empty()) {
    GLEANER_ASSIGN_OR_RETURN(sockaddr_un addr, UnixAddress(endpoint.unix_path));
    fd = with_timeouts(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      const int error = errno;
      close(fd);
      // A socket file nobody listens on: left by a daemon that was killed.
      if (error == ECONNREFUSED) {
        return core::Unavailable("no gleaner is running at " + endpoint.unix_path +
                                 " (the socket was left by one that stopped or was killed); "
                                 "start `gleaner up`, which replaces it");
      }
      return core::Unavailable("cannot reach gleaner at " + endpoint.unix_path + ": " +
                               std::strerror(error) + " (is `gleaner up` running?)");
    }
  } else {
    GLEANER_ASSIGN_OR_RETURN(TcpAddress addr, ResolveTcp(endpoint.host, endpoint.port));
    fd = with_timeouts(socket(addr.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr.storage), addr.length) != 0) {
      const std::string why = std::strerror(errno);
      close(fd);
      return core::Unavailable("cannot reach gleaner at " + endpoint.ToString() + ": " + why +
                               " (is `gleaner up --listen` serving there?)");
    }
  }
  if (fd < 0) return core::Unavailable(std::string("socket: ") + std::strerror(errno));
  std::string request = method + " " + target + " HTTP/1.1\r\nHost: gleaner\r\n";
  if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
  request += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
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
    return core::Unavailable("no answer from gleaner at " + endpoint.ToString());
  }
  const size_t body_at = response.find("\r\n\r\n");
  return std::pair{status, body_at == std::string::npos ? "" : response.substr(body_at + 4)};
}

}  // namespace gleaner::server
