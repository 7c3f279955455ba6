#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/mutex.h"
#include "core/result.h"
#include "net/connection.h"
#include "net/tls.h"
#include "server/connection_pool.h"
#include "server/http_message.h"

namespace gleaner::server {

// What the transport knows of the caller: on a Unix socket the kernel says
// who connected (SO_PEERCRED); over TCP nothing, so requests carry a token.
struct Peer {
  std::optional<uint32_t> uid;
};

// Serves HTTP/1.1 on a Unix socket or a TCP port, plain or TLS. One thread
// (the reader) accepts, reads and writes every connection without
// blocking (poll): a worker of the pool gets a request only once it is
// whole, and hands its answer back for the reader to write as the client
// takes it, so no client, however slowly it sends or reads, holds a worker;
// concurrent requests (submits waiting for one shared commit) proceed
// together. TLS handshakes are made by threads of their own, at most 20 a
// second per peer (a burst of 40), so a flood of them delays nobody's
// requests. Connections stay open between requests (keep-alive) unless
// the client says otherwise; pipelined requests are answered in turn, one
// at a time, so a connection queues at most one answer. A request must
// arrive within 10 s of its first byte (of the connection, for a new one,
// its handshake included), its answer must be taken within 30 s, and a
// connection with no request under way closes after 60 s. Every
// connection counts toward its peer's limit and the total
// (ConnectionPool: derived from the descriptor limit, the Unix socket's
// share apart from TCP's, root on the socket never refused); a full pool
// makes room by closing the connection idle longest.
// An answer that comes later (HttpResponse::later, a long poll) holds only
// its connection, no worker. On stop, requests not yet answered are closed
// unanswered. The handler is called from several threads at once.
class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&, const Peer&)>;

  // Every local user may connect (mode 0666): the kernel vouches for them.
  // A socket left by a killed server is replaced.
  // `pool` counts its connections; null: the process's Unix pool.
  static core::Result<std::unique_ptr<HttpServer>> ServeUnix(const std::string& path,
                                                             Handler handler,
                                                             ConnectionPool* pool = nullptr);
  // `host` is a numeric IPv4 or IPv6 address; port 0 picks a free one.
  // With `tls`, every connection speaks TLS (a plain HTTP request is
  // answered, in plain text, that it should use https://).
  // `pool`: null for the process's TCP pool.
  static core::Result<std::unique_ptr<HttpServer>> ServeTcp(
      const std::string& host, uint16_t port, Handler handler,
      std::shared_ptr<const net::TlsContext> tls = nullptr, ConnectionPool* pool = nullptr);
  ~HttpServer();  // stops, lets workers finish, removes a Unix socket
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // "unix:/var/lib/gleaner/gleaner.sock", "http://127.0.0.1:7380" or
  // "https://127.0.0.1:7380".
  const std::string& address() const { return address_; }

 private:
  struct Shared;
  HttpServer(int fd, bool unix_socket, std::string address, std::string socket_path,
             Handler handler, std::shared_ptr<const net::TlsContext> tls, ConnectionPool* pool);
  // A connection with a request read whole (or found malformed), or with
  // an answer that came later, waiting for a worker; and, once the worker
  // is done, with the bytes of its answer, for the reader to write.
  struct Complete {
    std::unique_ptr<net::Connection> conn;
    ConnectionPool::Slot slot;
    Peer peer;
    ParsedRequest parsed;
    std::string rest;                    // bytes of the next request, already read
    std::optional<HttpResponse> answer;  // a later answer: write only this
    bool keep_alive = false;
    std::string out;     // the answer's bytes not yet written
    bool drain = false;  // read what the client still sends before closing
  };
  // A TLS connection between its handshake's steps.
  struct Handshaking {
    std::unique_ptr<net::Connection> conn;
    ConnectionPool::Slot slot;
    Peer peer;
    std::chrono::steady_clock::time_point deadline;  // of its first request
    net::Connection::Got got = net::Connection::Got::kWouldBlock;
  };
  // A connection whose answer comes later.
  struct Parked {
    Complete held;
    std::chrono::steady_clock::time_point deadline;
    HttpResponse on_timeout;
  };
  void Read();
  void Work();
  void Shake();
  // Formats the answer and hands it to the reader to write.
  void Answer(Complete c, const HttpResponse& response);
  void Park(Complete c, HttpResponse response);
  // Hands a parked connection its answer (once; later calls do nothing).
  void Unpark(uint64_t id, std::optional<HttpResponse> answer) GLEANER_EXCLUDES(mu_);
  void WakeReader();

  int fd_;
  bool unix_socket_;
  std::string address_;
  std::string socket_path_;  // removed on stop
  Handler handler_;
  std::shared_ptr<const net::TlsContext> tls_;
  ConnectionPool* pool_;
  int wake_[2] = {-1, -1};          // a pipe: the reader polls its end for returned connections
  std::shared_ptr<Shared> shared_;  // what late answers reach, after the server too
  std::atomic<bool> stop_{false};
  core::Mutex mu_;
  std::condition_variable ready_;
  std::deque<Complete> complete_ GLEANER_GUARDED_BY(mu_);
  std::vector<Complete> returned_ GLEANER_GUARDED_BY(mu_);      // answered, back to the reader
  std::deque<Handshaking> handshakes_ GLEANER_GUARDED_BY(mu_);  // for the handshake threads
  std::vector<Handshaking> shaken_ GLEANER_GUARDED_BY(mu_);     // a step made, back to the reader
  std::condition_variable shake_;
  std::map<uint64_t, Parked> parked_ GLEANER_GUARDED_BY(mu_);
  uint64_t next_parked_ GLEANER_GUARDED_BY(mu_) = 0;
  std::thread reader_;
  std::vector<std::thread> workers_;
  std::vector<std::thread> handshakers_;
};

}  // namespace gleaner::server
