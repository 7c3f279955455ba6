#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"
#include "net/connection.h"
#include "net/tls.h"
#include "server/http_message.h"

namespace gleaner::server {

// What the transport knows of the caller: on a Unix socket the kernel says
// who connected (SO_PEERCRED); over TCP nothing, so requests carry a token.
struct Peer {
  std::optional<uint32_t> uid;
};

// Serves HTTP/1.1 on a Unix socket or a TCP port, plain or TLS. One thread
// accepts and reads every connection without blocking (poll) until a
// request is whole; only then does a worker of the pool handle and answer
// it, so concurrent requests (submits waiting for one shared commit)
// proceed together, and clients that send slowly or not at all hold no
// worker. Connections stay open between requests (keep-alive) unless the
// client says otherwise. A request must arrive within 10 s of its first
// byte (of the connection, for a new one); a connection with no request
// under way closes after 60 s; one peer (IP address, or local uid) may
// have at most 256 requests under way (more are answered 429), while
// connections kept open with none count only toward a total, where the
// one idle longest makes room.
// An answer that comes later (HttpResponse::later, a long poll) holds only
// its connection, no worker. On stop, requests not yet answered are closed
// unanswered. The handler is called from several threads at once.
class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&, const Peer&)>;

  // Every local user may connect (mode 0666): the kernel vouches for them.
  // A socket left by a killed server is replaced.
  static core::Result<std::unique_ptr<HttpServer>> ServeUnix(const std::string& path,
                                                             Handler handler);
  // `host` is a numeric IPv4 or IPv6 address; port 0 picks a free one.
  // With `tls`, every connection speaks TLS (a plain HTTP request is
  // answered, in plain text, that it should use https://).
  static core::Result<std::unique_ptr<HttpServer>> ServeTcp(
      const std::string& host, uint16_t port, Handler handler,
      std::shared_ptr<const net::TlsContext> tls = nullptr);
  ~HttpServer();  // stops, lets workers finish, removes a Unix socket
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // "unix:/var/lib/gleaner/gleaner.sock", "http://127.0.0.1:7380" or
  // "https://127.0.0.1:7380".
  const std::string& address() const { return address_; }

 private:
  struct Shared;
  HttpServer(int fd, bool unix_socket, std::string address, std::string socket_path,
             Handler handler, std::shared_ptr<const net::TlsContext> tls);
  // A connection with a request read whole (or found malformed), or with
  // an answer that came later, waiting for a worker.
  struct Complete {
    std::unique_ptr<net::Connection> conn;
    Peer peer;
    std::string peer_key;
    ParsedRequest parsed;
    std::string rest;  // bytes of the next request, already read
    std::optional<HttpResponse> answer;  // a later answer: write only this
    bool keep_alive = false;
  };
  // A connection whose answer comes later.
  struct Parked {
    Complete held;
    std::chrono::steady_clock::time_point deadline;
    HttpResponse on_timeout;
  };
  void Read();
  void Work();
  // Writes the answer; a connection kept alive goes back to the reader.
  void Answer(Complete c, const HttpResponse& response);
  void Park(Complete c, HttpResponse response);
  // Hands a parked connection its answer (once; later calls do nothing).
  void Unpark(uint64_t id, std::optional<HttpResponse> answer);
  void WakeReader();

  int fd_;
  bool unix_socket_;
  std::string address_;
  std::string socket_path_;  // removed on stop
  Handler handler_;
  std::shared_ptr<const net::TlsContext> tls_;
  int wake_[2] = {-1, -1};  // a pipe: the reader polls its end for returned connections
  std::shared_ptr<Shared> shared_;  // what late answers reach, after the server too
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<Complete> complete_;        // guarded by mu_
  std::vector<Complete> returned_;       // kept alive, back to the reader; guarded by mu_
  std::map<uint64_t, Parked> parked_;    // guarded by mu_
  uint64_t next_parked_ = 0;             // guarded by mu_
  std::thread reader_;
  std::vector<std::thread> workers_;
};

}  // namespace gleaner::server
