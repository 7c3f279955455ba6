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
// port. One thread accepts; a pool of workers reads, handles and answers,
// so concurrent requests (submits waiting for one shared commit) proceed
// together, and a slow client holds a worker at most for the request
// deadline (ReadRequest). On stop, requests not yet taken by a worker are
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
  void Accept();
  void Work();
  void Answer(int client);

  int fd_;
  bool unix_socket_;
  std::string address_;
  std::string socket_path_;  // removed on stop
  Handler handler_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<int> accepted_;  // connections waiting for a worker
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

}  // namespace gleaner::server
