#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace gleaner::net {

core::Result<sockaddr_un> UnixAddress(const std::string& path);

struct TcpAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
};

// A numeric IPv4 or IPv6 address ("127.0.0.1", "::1"), or "localhost".
// Names are not looked up: the API is meant for loopback or a known
// address, and a lookup could hang.
core::Result<TcpAddress> ResolveTcp(const std::string& host, uint16_t port);

// Where a client connects to `host`: ResolveTcp's address, or for any other
// name the addresses DNS gives (a coordinator or a webhook named by its
// URL), in the resolver's order. Unavailable, naming the host, when it has
// none.
core::Result<std::vector<TcpAddress>> LookupTcp(const std::string& host, uint16_t port);

// "127.0.0.1:7380" or "[::1]:7380" -> host and port.
core::Result<std::pair<std::string, uint16_t>> ParseHostPort(const std::string& text);
std::string FormatHostPort(const std::string& host, uint16_t port);

// The numeric IP address of a connected peer ("127.0.0.1", "::1").
std::string PeerAddress(const sockaddr_storage& peer);

}  // namespace gleaner::net
