#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"
#include "net/tls.h"

struct ssl_st;  // OpenSSL's SSL

namespace gleaner::net {

// A connected stream socket and, over TLS, its session; owns both. One
// thread uses it at a time.
class Connection {
 public:
  explicit Connection(int fd) : fd_(fd) {}  // plain
  // The server's side of TLS on an accepted (non-blocking) socket: the
  // handshake happens in the first ReadAvailable calls.
  static std::unique_ptr<Connection> AcceptTls(int fd, const TlsContext& tls);
  // The client's side: the handshake happens now (a blocking socket, its
  // timeouts bound it), and the server's certificate must be valid for
  // `host`. Errors say what was wrong in words: an unknown CA, an expired
  // certificate, a server that speaks plain HTTP. `where` names the server.
  static core::Result<std::unique_ptr<Connection>> ConnectTls(int fd, const TlsContext& tls,
                                                              const std::string& host,
                                                              const std::string& where);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int fd() const { return fd_; }
  bool tls() const { return ssl_ != nullptr; }

  enum class Got { kData, kWouldBlock, kEnded, kFailed };
  // On a non-blocking socket: appends what has arrived, at most about
  // `limit` bytes more. kWouldBlock after nothing new.
  Got ReadAvailable(std::string* into, size_t limit);
  // The TLS layer must write (a handshake message) before it reads on:
  // poll for POLLOUT as well.
  bool wants_write() const { return wants_write_; }
  // The server's side of TLS that has not finished its handshake.
  bool handshaking() const;
  // On a non-blocking socket: the next step of the server's handshake,
  // the costly one (the key exchange) included. kData once it is done,
  // kWouldBlock while it waits for the peer (poll for POLLIN, and POLLOUT
  // where wants_write()), kFailed when it cannot succeed.
  Got Handshake();
  // On a non-blocking socket: writes what the socket takes of `data` now
  // and says how much (0: nothing fitted; poll for POLLOUT, and POLLIN
  // where wants_read()). Call again with the rest.
  core::Result<size_t> WriteAvailable(std::string_view data);
  bool wants_read() const { return wants_read_; }
  // After kFailed on a TLS port: the peer spoke plain HTTP to it.
  bool got_plain_http() const { return plain_http_; }

  // On a blocking socket (SO_RCVTIMEO bounds a wait): bytes read, 0 once
  // the peer ended.
  core::Result<size_t> Read(char* buf, size_t size);
  // On a blocking socket (SO_SNDTIMEO bounds a wait): all of `data`.
  core::Status WriteAll(std::string_view data);

 private:
  Connection(int fd, ssl_st* ssl) : fd_(fd), ssl_(ssl) {}
  // A fatal TLS error on the server's side: noted (and whether the peer
  // spoke plain HTTP), OpenSSL's queue cleared.
  Got Failed();
  int fd_;
  ssl_st* ssl_ = nullptr;
  bool wants_write_ = false;
  bool wants_read_ = false;
  bool plain_http_ = false;
  bool failed_ = false;  // a fatal TLS error: no close_notify after it
  std::string where_;    // the server, on a client's connection
};

}  // namespace gleaner::net
