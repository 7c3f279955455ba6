#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"
#include "server/http_message.h"

namespace gleaner::server {

// What the transport knows of the caller: on a Unix socket the kernel says
// who connected (SO_PEERCRED); over TCP nothing, so requests carry a token.
struct Peer {
  std::optional<uint32_t> uid;
};

// Serves HTTP/1.1 (one request per connection) on a Unix socket or a TCP
// port. One thread accepts and reads every connection without blocking
// (poll) until its request is whole; only then does a worker of the pool
// handle and answer it, so concurrent requests (submits waiting for one
// shared commit) proceed together, and clients that send slowly or not at
// all hold no worker. A request must arrive within 10 s; one peer (IP
// address, or local uid) may have at most 256 connections still sending
// (more are answered 429). On stop, requests not yet taken by a worker are
// closed unanswered. The handler is called from several threads at once.
class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&, const Peer&)>;

  // Every local user may connect (mode 0666): the kernel vouches for them.
  // A socket left by a killed server is replaced.
  static core::Result<std::unique_ptr<HttpServer>> ServeUnix(const std::string& path,
                                                             Handler handler);
  // `host` is a numeric IPv4 or IPv6 address; port 0 picks a free one.
  static core::Result<std::unique_ptr<HttpServer>> ServeTcp(const std::string& host, uint16_t port,
                                                            Handler handler);
  ~HttpServer();  // stops, lets workers finish, removes a Unix socket
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // "unix:/var/lib/gleaner/gleaner.sock" or "http://127.0.0.1:7380".
  const std::string& address() const { return address_; }

 private:
  HttpServer(int fd, bool unix_socket, std::string address, std::string socket_path,
             Handler handler);
  // A request read whole (or found malformed), waiting for a worker.
  struct Complete {
    int fd = -1;
    Peer peer;
    ParsedRequest parsed;
  };
  void Read();
  void Work();

  int fd_;
  bool unix_socket_;
  std::string address_;
  std::string socket_path_;  // removed on stop
  Handler handler_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<Complete> complete_;  // guarded by mu_
  std::thread reader_;
  std::vector<std::thread> workers_;
};

}  // namespace gleaner::server
