#include "agent/http_post.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "net/connection.h"
#include "net/tls.h"

namespace gleaner::agent {
namespace {

struct Url {
  bool tls = false;
  std::string host;
  std::string port = "80";
  std::string path = "/";
};

core::Result<Url> ParseUrl(const std::string& url) {
  Url out;
  std::string rest;
  if (url.rfind("https://", 0) == 0) {
    out.tls = true;
    out.port = "443";
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    return core::InvalidArgument("webhook URL \"" + url + "\" must start with https:// or http://");
  }
  const size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    out.path = rest.substr(slash);
    rest.resize(slash);
  }
  // host, host:port, [v6], [v6]:port
  const size_t colon = rest.rfind(':');
  const size_t bracket = rest.rfind(']');
  if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) {
    out.port = rest.substr(colon + 1);
    rest.resize(colon);
  }
  if (rest.size() > 2 && rest.front() == '[' && rest.back() == ']') {
    rest = rest.substr(1, rest.size() - 2);
  }
  if (rest.empty()) return core::InvalidArgument("webhook URL \"" + url + "\" has no host");
  out.host = rest;
  return out;
}

core::Status ConnectWithTimeout(int fd, const sockaddr* addr, socklen_t len, int timeout_ms) {
  const int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  if (connect(fd, addr, len) != 0 && errno != EINPROGRESS) {
    return core::Unavailable(std::string("connect: ") + std::strerror(errno));
  }
  pollfd p{fd, POLLOUT, 0};
  int ready;
  do {
    ready = poll(&p, 1, timeout_ms);
  } while (ready < 0 && errno == EINTR);
  if (ready != 1) return core::Unavailable("connect: timed out");
  int error = 0;
  socklen_t error_len = sizeof error;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &error_len);
  if (error != 0) return core::Unavailable(std::string("connect: ") + std::strerror(error));
  fcntl(fd, F_SETFL, flags);
  return core::Status::Ok();
}

}  // namespace

core::Result<int> HttpPostJson(const std::string& url, const std::string& body,
                               core::Duration timeout) {
  GLEANER_ASSIGN_OR_RETURN(Url u, ParseUrl(url));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(u.host.c_str(), u.port.c_str(), &hints, &found); rc != 0) {
    return core::Unavailable("cannot resolve " + u.host + ": " + gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, &freeaddrinfo);
  const int timeout_ms = static_cast<int>(timeout.count() / 1000);
  core::Status last = core::Unavailable("no address for " + u.host);
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    last = ConnectWithTimeout(fd, a->ai_addr, a->ai_addrlen, timeout_ms);
    if (!last.ok()) {
      close(fd);
      continue;
    }
    timeval tv{static_cast<time_t>(timeout_ms / 1000),
               static_cast<suseconds_t>((timeout_ms % 1000) * 1000)};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    std::unique_ptr<net::Connection> conn;
    if (u.tls) {
      GLEANER_ASSIGN_OR_RETURN(std::shared_ptr<net::TlsContext> tls, net::DefaultClientTls());
      GLEANER_ASSIGN_OR_RETURN(conn, net::Connection::ConnectTls(fd, *tls, u.host, url));
    } else {
      conn = std::make_unique<net::Connection>(fd);
    }
    const std::string host =
        u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host;  // IPv6 literal
    const std::string request =
        "POST " + u.path + " HTTP/1.1\r\nHost: " + host + ":" + u.port +
        "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\nUser-Agent: gleaner\r\nConnection: close\r\n\r\n" + body;
    if (auto sent = conn->WriteAll(request); !sent.ok()) return sent.WithContext(url);
    std::string response;
    char buf[1024];
    while (response.find("\r\n") == std::string::npos) {
      auto n = conn->Read(buf, sizeof buf);
      if (!n.ok()) return n.status().WithContext(url);
      if (*n == 0) break;
      response.append(buf, *n);
    }
    int status = 0;
    if (std::sscanf(response.c_str(), "HTTP/%*d.%*d %d", &status) != 1) {
      return core::Unavailable("no HTTP response from " + url);
    }
    return status;
  }
  return last.WithContext(url);
}

}  // namespace gleaner::agent
