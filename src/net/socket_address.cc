#include "net/socket_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstdlib>
#include <cstring>

namespace gleaner::net {

core::Result<sockaddr_un> UnixAddress(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return core::InvalidArgument("socket path too long (over 107 bytes): " + path +
                                 "; choose a shorter --data-dir");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

core::Result<TcpAddress> ResolveTcp(const std::string& host, uint16_t port) {
  TcpAddress out;
  const std::string numeric = host == "localhost" ? "127.0.0.1" : host;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out.storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out.storage);
  if (inet_pton(AF_INET, numeric.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    out.length = sizeof *v4;
  } else if (inet_pton(AF_INET6, numeric.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    out.length = sizeof *v6;
  } else {
    return core::InvalidArgument("\"" + host +
                                 "\" is not a numeric IP address (e.g. 127.0.0.1 or ::1)");
  }
  return out;
}

core::Result<std::vector<TcpAddress>> LookupTcp(const std::string& host, uint16_t port) {
  if (auto numeric = ResolveTcp(host, port); numeric.ok()) return std::vector{*numeric};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0) return core::Unavailable("cannot resolve " + host + ": " + gai_strerror(rc));
  std::vector<TcpAddress> out;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_addrlen > sizeof(sockaddr_storage)) continue;
    TcpAddress t;
    std::memcpy(&t.storage, a->ai_addr, a->ai_addrlen);
    t.length = a->ai_addrlen;
    out.push_back(t);
  }
  freeaddrinfo(found);
  if (out.empty()) return core::Unavailable("cannot resolve " + host + ": no address");
  return out;
}

core::Result<std::pair<std::string, uint16_t>> ParseHostPort(const std::string& text) {
  const size_t colon = text.rfind(':');
  const auto bad = [&] {
    return core::InvalidArgument("\"" + text +
                                 "\" is not HOST:PORT (e.g. 127.0.0.1:7380 or [::1]:7380)");
  };
  if (colon == std::string::npos || colon == 0) return bad();
  std::string host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return bad();
    host = host.substr(1, host.size() - 2);
  }
  const std::string port_text = text.substr(colon + 1);
  char* end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || port < 0 || port > 65535) return bad();
  return std::pair{host, static_cast<uint16_t>(port)};
}

std::string FormatHostPort(const std::string& host, uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string PeerAddress(const sockaddr_storage& peer) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (peer.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&peer)->sin_addr, text, sizeof text);
  } else if (peer.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_addr, text,
              sizeof text);
  }
  return text;
}

}  // namespace gleaner::net
