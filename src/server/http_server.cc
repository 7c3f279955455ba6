#include "server/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <map>

#include "server/descriptor_passing.h"
#include "server/socket_address.h"

namespace gleaner::server {
namespace {

constexpr int kWorkers = 16;
// Complete requests waiting for a worker; while it is full, nothing more
// is read or accepted (connections wait in the kernel's backlog).
constexpr size_t kMaxWaiting = 64;
// Connections being read, or kept alive between requests: each costs no
// worker, only a descriptor and its bytes so far. One peer (an IP address,
// or a local uid) may have this many requests under way; connections kept
// alive with none count only for the total, where the one idle longest is
// closed first to make room. 10,000 agents keep two each (reports, and
// the long poll between its answers).
constexpr size_t kMaxConnections = 32768;
constexpr size_t kMaxReadingPerPeer = 256;
// Answers that come later (long polls): each holds a descriptor only.
constexpr size_t kMaxParked = 65536;
// All of a request must arrive within this of its first byte (of the
// connection, for a new one); a worker then has it whole.
constexpr auto kRequestDeadline = std::chrono::seconds(10);
// A kept-alive connection with no request under way closes after this.
constexpr auto kIdleLimit = std::chrono::seconds(60);
// How often those deadlines, and the long polls', are checked.
constexpr auto kSweepEvery = std::chrono::milliseconds(100);

void SetSendTimeout(int fd, int seconds) {
  timeval tv{seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void SetBlocking(int fd, bool blocking) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK);
}

// Best effort, never blocking (the socket is): for answers the reader
// gives itself, before it closes the connection.
void SendNow(net::Connection& conn, const HttpResponse& r) {
  conn.WriteAll(FormatResponse(r)).IgnoreError();
}

// After answering a request we did not read to its end: closing with its
// bytes unread would send a reset, and the client could lose the answer.
// Read and drop what is still coming, for a moment.
void DrainBeforeClose(int fd) {
  shutdown(fd, SHUT_WR);
  // One second in all, however the peer trickles: a worker is never held.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  char buf[16384];
  size_t drained = 0;
  while (drained < 4 * kMaxBodyBytes) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) != 1) return;
    const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) return;
    drained += static_cast<size_t>(n);
  }
}

core::Status Failed(const std::string& what, int fd) {
  const std::string why = std::strerror(errno);
  if (fd >= 0) close(fd);
  return core::Unavailable("cannot serve on " + what + ": " + why);
}

}  // namespace

// What a late answer reaches: the server while it runs, nothing after.
struct HttpServer::Shared {
  std::mutex mu;
  HttpServer* server = nullptr;
};

core::Result<std::unique_ptr<HttpServer>> HttpServer::ServeUnix(const std::string& path,
                                                                Handler handler) {
  GLEANER_ASSIGN_OR_RETURN(sockaddr_un addr, UnixAddress(path));
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Failed(path, -1);
  // A socket left by a gleaner that was killed; anything else by that name
  // (a file, a link) is not ours to remove.
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      close(fd);
      return core::FailedPrecondition(path + " exists and is not a socket; remove it");
    }
    unlink(path.c_str());
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      chmod(path.c_str(), 0666) != 0 || listen(fd, 256) != 0) {
    return Failed(path, fd);
  }
  return std::unique_ptr<HttpServer>(
      new HttpServer(fd, true, "unix:" + path, path, std::move(handler), nullptr));
}

core::Result<std::unique_ptr<HttpServer>> HttpServer::ServeTcp(
    const std::string& host, uint16_t port, Handler handler,
    std::shared_ptr<const net::TlsContext> tls) {
  GLEANER_ASSIGN_OR_RETURN(TcpAddress addr, ResolveTcp(host, port));
  const std::string where = FormatHostPort(host, port);
  const int fd = socket(addr.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Failed(where, -1);
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr.storage), addr.length) != 0 ||
      listen(fd, 1024) != 0) {
    return Failed(where, fd);
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  const uint16_t bound_port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  const std::string scheme = tls ? "https://" : "http://";
  return std::unique_ptr<HttpServer>(new HttpServer(fd, false,
                                                    scheme + FormatHostPort(host, bound_port), "",
                                                    std::move(handler), std::move(tls)));
}

HttpServer::HttpServer(int fd, bool unix_socket, std::string address, std::string socket_path,
                       Handler handler, std::shared_ptr<const net::TlsContext> tls)
    : fd_(fd),
      unix_socket_(unix_socket),
      address_(std::move(address)),
      socket_path_(std::move(socket_path)),
      handler_(std::move(handler)),
      tls_(std::move(tls)),
      shared_(std::make_shared<Shared>()) {
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
  shared_->server = this;
  for (int i = 0; i < kWorkers; ++i) workers_.emplace_back([this] { Work(); });
  reader_ = std::thread([this] { Read(); });
}

HttpServer::~HttpServer() {
  {
    std::lock_guard lock(shared_->mu);
    shared_->server = nullptr;
  }
  {
    // Under the lock, so no worker misses the wake-up between its check
    // and its wait.
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  ready_.notify_all();
  WakeReader();
  reader_.join();
  for (std::thread& w : workers_) w.join();
  // Not answered: we are stopping. Their connections close with them.
  complete_.clear();
  returned_.clear();
  parked_.clear();
  close(fd_);
  if (wake_[0] >= 0) close(wake_[0]);
  if (wake_[1] >= 0) close(wake_[1]);
  if (unix_socket_) unlink(socket_path_.c_str());
}

void HttpServer::WakeReader() {
  const char byte = 1;
  if (wake_[1] >= 0) [[maybe_unused]]
    ssize_t n = write(wake_[1], &byte, 1);
}

void HttpServer::Read() {
  struct Reading {
    std::unique_ptr<net::Connection> conn;
    std::string received;
    std::chrono::steady_clock::time_point deadline;
    Peer peer;
    std::string peer_key;
    bool idle = false;  // kept alive, no byte of a next request yet
  };
  std::map<int, Reading> reading;
  std::map<std::string, size_t> per_peer;
  const auto forget = [&](const std::string& peer_key) {
    if (--per_peer[peer_key] == 0) per_peer.erase(peer_key);
  };
  const auto drop = [&](std::map<int, Reading>::iterator it) {
    if (!it->second.idle) forget(it->second.peer_key);
    return reading.erase(it);
  };
  const auto too_many = [&](const std::string& peer_key) {
    const auto n = per_peer.find(peer_key);
    return n != per_peer.end() && n->second >= kMaxReadingPerPeer;
  };
  const auto refuse = [&](net::Connection& conn, const std::string& peer_key) {
    SendNow(conn,
            ErrorResponse(core::ResourceExhausted("too many open connections from " + peer_key +
                                                  "; finish or close some first")));
  };
  // A request whole (or malformed) goes to the workers; true when it did.
  const auto hand_over = [&](std::map<int, Reading>::iterator it) {
    ParsedRequest parsed = ParseRequest(it->second.received);
    if (parsed.kind == ParsedRequest::Kind::kIncomplete) return false;
    Complete c;
    c.keep_alive = parsed.kind == ParsedRequest::Kind::kComplete && parsed.request.keep_alive;
    if (parsed.kind == ParsedRequest::Kind::kComplete) {
      c.rest = it->second.received.substr(parsed.consumed);
    }
    c.conn = std::move(it->second.conn);
    c.peer = it->second.peer;
    c.peer_key = it->second.peer_key;
    c.parsed = std::move(parsed);
    drop(it);
    std::lock_guard lock(mu_);
    complete_.push_back(std::move(c));
    ready_.notify_one();
    return true;
  };
  std::vector<pollfd> polled;
  // Deadlines are seconds long: they are swept a few times a second, not
  // on every wake-up, which with thousands of held long polls and
  // connections would cost more than the requests themselves.
  auto next_sweep = std::chrono::steady_clock::now();
  while (!stop_) {
    bool full;
    std::vector<Complete> back;
    std::vector<uint64_t> expired;
    const auto now = std::chrono::steady_clock::now();
    const bool sweep = now >= next_sweep;
    if (sweep) next_sweep = now + kSweepEvery;
    {
      std::lock_guard lock(mu_);
      full = complete_.size() >= kMaxWaiting;
      back.swap(returned_);
      if (sweep) {
        for (const auto& [id, p] : parked_) {
          if (p.deadline <= now) expired.push_back(id);
        }
      }
    }
    for (const uint64_t id : expired) Unpark(id, std::nullopt);
    for (Complete& c : back) {
      const int fd = c.conn->fd();
      Reading r{std::move(c.conn), std::move(c.rest), now + kIdleLimit, c.peer, c.peer_key};
      r.idle = r.received.empty();
      if (!r.idle) {
        r.deadline = now + kRequestDeadline;
        ++per_peer[r.peer_key];
      }
      auto [it, unused] = reading.emplace(fd, std::move(r));
      if (!it->second.received.empty()) hand_over(it);  // pipelined
    }
    for (auto it = sweep ? reading.begin() : reading.end(); it != reading.end();) {
      if (now < it->second.deadline) {
        ++it;
        continue;
      }
      if (!it->second.idle) {
        SendNow(*it->second.conn,
                ErrorResponse(core::InvalidArgument("the request did not arrive within 10 s")));
      }
      it = drop(it);
    }
    polled.clear();
    polled.push_back({wake_[0], POLLIN, 0});
    if (!full) {
      polled.push_back({fd_, POLLIN, 0});
      for (const auto& [fd, r] : reading) {
        polled.push_back(
            {fd, static_cast<short>(POLLIN | (r.conn->wants_write() ? POLLOUT : 0)), 0});
      }
    }
    if (poll(polled.data(), polled.size(), 100) <= 0) {
      if (full) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    if (polled[0].revents != 0) {
      char buf[256];
      while (read(wake_[0], buf, sizeof buf) > 0) {
      }
    }
    if (full) continue;
    for (size_t i = 2; i < polled.size(); ++i) {
      if (polled[i].revents == 0) continue;
      auto it = reading.find(polled[i].fd);
      if (it == reading.end()) continue;
      Reading& r = it->second;
      const net::Connection::Got got =
          r.conn->ReadAvailable(&r.received, kMaxHeaderBytes + kMaxBodyBytes + 4);
      if (got == net::Connection::Got::kFailed) {
        if (r.conn->got_plain_http()) {
          // Said in plain text, the only language this client speaks.
          const std::string out = FormatResponse(ErrorResponse(core::InvalidArgument(
              "this port speaks TLS: use https:// for it (and --ca-file for a private CA)")));
          [[maybe_unused]] const ssize_t n =
              send(r.conn->fd(), out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        drop(it);
        continue;
      }
      if (got == net::Connection::Got::kData && r.idle) {
        if (too_many(r.peer_key)) {
          refuse(*r.conn, r.peer_key);
          drop(it);
          continue;
        }
        r.idle = false;
        ++per_peer[r.peer_key];
        r.deadline = std::chrono::steady_clock::now() + kRequestDeadline;
      }
      // A client may end its side once it has sent all: what it sent is
      // answered. Only an incomplete request from a client that left is
      // dropped.
      if (!hand_over(it) && got == net::Connection::Got::kEnded) drop(it);
    }
    if (polled[1].revents == 0) continue;
    for (int accepted = 0; accepted < 64; ++accepted) {
      sockaddr_storage from{};
      socklen_t from_len = sizeof from;
      const int client =
          accept4(fd_, reinterpret_cast<sockaddr*>(&from), &from_len, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (client < 0) {
        // Out of descriptors (EMFILE, ENFILE): back off instead of spinning.
        if (errno == EMFILE || errno == ENFILE) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        break;
      }
      Reading r;
      r.deadline = std::chrono::steady_clock::now() + kRequestDeadline;
      if (unix_socket_) {
        ucred cred{};
        socklen_t len = sizeof cred;
        if (getsockopt(client, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
          close(client);
          continue;
        }
        r.peer.uid = cred.uid;
        r.peer_key = "uid " + std::to_string(cred.uid);
      } else {
        r.peer_key = PeerAddress(from);
      }
      r.conn = tls_ ? net::Connection::AcceptTls(client, *tls_)
                    : std::make_unique<net::Connection>(client);
      if (r.conn == nullptr) continue;
      if (too_many(r.peer_key)) {
        if (!tls_) refuse(*r.conn, r.peer_key);  // a TLS client has not shaken hands yet
        continue;
      }
      if (reading.size() >= kMaxConnections) {
        // An idle connection goes first, then the one that has waited
        // longest for its request.
        auto victim = std::min_element(reading.begin(), reading.end(), [](auto& a, auto& b) {
          return std::pair(!a.second.idle, a.second.deadline) <
                 std::pair(!b.second.idle, b.second.deadline);
        });
        drop(victim);
      }
      ++per_peer[r.peer_key];
      const int fd = r.conn->fd();
      reading.emplace(fd, std::move(r));
    }
  }
  reading.clear();
}

void HttpServer::Work() {
  while (true) {
    Complete c;
    {
      std::unique_lock lock(mu_);
      ready_.wait(lock, [this] { return stop_ || !complete_.empty(); });
      if (stop_) return;  // the destructor closes what is left unanswered
      c = std::move(complete_.front());
      complete_.pop_front();
    }
    SetBlocking(c.conn->fd(), true);
    SetSendTimeout(c.conn->fd(), 5);
    if (c.answer) {
      const HttpResponse answer = std::move(*c.answer);
      Answer(std::move(c), answer);
    } else if (c.parsed.kind == ParsedRequest::Kind::kError) {
      HttpResponse r = ErrorResponse(core::InvalidArgument(c.parsed.error));
      r.status = c.parsed.error_status;
      c.conn->WriteAll(FormatResponse(r)).IgnoreError();
      DrainBeforeClose(c.conn->fd());
    } else {
      HttpResponse r;
      try {
        r = handler_(c.parsed.request, c.peer);
      } catch (const std::exception& e) {
        // A bug or exhausted memory in one request must not end the daemon.
        r = ErrorResponse(core::Internal(e.what()));
      }
      if (r.later != nullptr) {
        Park(std::move(c), std::move(r));
      } else {
        Answer(std::move(c), r);
      }
    }
  }
}

void HttpServer::Answer(Complete c, const HttpResponse& response) {
  const bool keep_alive = c.keep_alive && !stop_;
  const std::string text = FormatResponse(response, keep_alive);
  // A descriptor travels with the answer's first bytes; only a Unix socket
  // can carry one (the API hands them out only there).
  const core::Status sent = response.descriptor != nullptr && unix_socket_ && !c.conn->tls()
                                ? SendWithDescriptor(c.conn->fd(), text, response.descriptor->fd)
                                : c.conn->WriteAll(text);
  if (!sent.ok() || !keep_alive) return;
  SetBlocking(c.conn->fd(), false);
  c.answer.reset();
  {
    std::lock_guard lock(mu_);
    returned_.push_back(std::move(c));
  }
  WakeReader();
}

void HttpServer::Park(Complete c, HttpResponse response) {
  const std::shared_ptr<LaterResponse> later = std::move(response.later);
  response.later = nullptr;
  uint64_t id;
  {
    std::lock_guard lock(mu_);
    if (parked_.size() >= kMaxParked) {
      c.answer = std::move(response);  // answered at once: as if its time ran out
      complete_.push_back(std::move(c));
      ready_.notify_one();
      return;
    }
    id = next_parked_++;
    parked_.emplace(id, Parked{std::move(c), std::chrono::steady_clock::now() + later->limit,
                               std::move(response)});
  }
  std::weak_ptr<Shared> weak = shared_;
  later->wait([weak, id](HttpResponse answer) {
    const std::shared_ptr<Shared> shared = weak.lock();
    if (shared == nullptr) return;
    std::lock_guard lock(shared->mu);
    if (shared->server != nullptr) shared->server->Unpark(id, std::move(answer));
  });
}

void HttpServer::Unpark(uint64_t id, std::optional<HttpResponse> answer) {
  std::lock_guard lock(mu_);
  const auto it = parked_.find(id);
  if (it == parked_.end()) return;
  Complete c = std::move(it->second.held);
  c.answer = answer ? std::move(*answer) : std::move(it->second.on_timeout);
  parked_.erase(it);
  complete_.push_back(std::move(c));
  ready_.notify_one();
}

}  // namespace gleaner::server
