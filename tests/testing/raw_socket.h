#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace gleaner::testing {

// A TCP connection to 127.0.0.1:`port`, for sending bytes no client of
// ours would; -1 on failure. `from`: the loopback address it comes from,
// so that one test can be several peers (127.0.0.0/8 is all loopback).
inline int ConnectLoopback(uint16_t port, const char* from = nullptr) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (from != nullptr) {
    sockaddr_in source{};
    source.sin_family = AF_INET;
    inet_pton(AF_INET, from, &source.sin_addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0) {
      close(fd);
      return -1;
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Reads what the peer sends into `out` for at most `limit`, until it
// closes (true) or `enough` says so (false); false at the limit too.
template <typename Enough>
bool ReadUntil(int fd, std::chrono::milliseconds limit, std::string* out, Enough enough) {
  char buf[4096];
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20) != 1) {
      if (enough(*out)) return false;
      continue;
    }
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return true;
    out->append(buf, static_cast<size_t>(n));
  }
  return false;
}

// Everything the peer sends before it closes, waiting at most `limit`.
inline std::string ReadAll(int fd, std::chrono::milliseconds limit) {
  std::string out;
  ReadUntil(fd, limit, &out, [](const std::string&) { return false; });
  return out;
}

// Sends all of `text`; false if the peer would not take it.
inline bool SendAll(int fd, const std::string& text) {
  size_t sent = 0;
  while (sent < text.size()) {
    const ssize_t n = send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// The first answer on a kept-alive connection: its head and as much of its
// body as came within `limit` (enough for the short answers tests use).
inline std::string ReadSome(int fd, std::chrono::milliseconds limit) {
  std::string out;
  ReadUntil(fd, limit, &out,
            [](const std::string& got) { return got.find("\r\n\r\n") != std::string::npos; });
  return out;
}

// Whether the peer closed `fd` within `limit` (what it sent first is read
// and dropped).
inline bool ClosedWithin(int fd, std::chrono::milliseconds limit) {
  std::string dropped;
  return ReadUntil(fd, limit, &dropped, [](const std::string&) { return false; });
}

}  // namespace gleaner::testing
