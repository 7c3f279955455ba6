#include "server/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <map>

#include "net/socket_address.h"
#include "server/descriptor_passing.h"

namespace gleaner::server {
namespace {

constexpr int kWorkers = 16;
// TLS handshakes: each costs a key exchange, about a millisecond of CPU,
// made by threads of their own so that a flood of them holds up neither
// the reader nor the workers; one peer may start at most this many a
// second (with a burst of twice that), and no more.
constexpr int kHandshakers = 2;
constexpr double kHandshakesPerSecond = 20;
constexpr double kHandshakeBurst = 40;
// Complete requests waiting for a worker; while it is full, nothing more
// is read or accepted (connections wait in the kernel's backlog).
constexpr size_t kMaxWaiting = 64;
// Answers that come later (long polls): each holds a descriptor only.
constexpr size_t kMaxParked = 65536;
// All of a request must arrive within this of its first byte (of the
// connection, for a new one); a worker then has it whole.
constexpr auto kRequestDeadline = std::chrono::seconds(10);
// The client must have taken all of an answer within this of its first
// byte, however it trickles.
constexpr auto kAnswerDeadline = std::chrono::seconds(30);
// A kept-alive connection with no request under way closes after this.
constexpr auto kIdleLimit = std::chrono::seconds(60);
// After answering a request we did not read to its end, what the client
// still sends is read and dropped for this long (and at most 4 MiB):
// closing with its bytes unread would send a reset, and the client could
// lose the answer.
constexpr auto kDrainFor = std::chrono::seconds(1);
constexpr size_t kMaxDrained = 4 * kMaxBodyBytes;
// How often those deadlines, and the long polls', are checked.
constexpr auto kSweepEvery = std::chrono::milliseconds(100);

using Clock = std::chrono::steady_clock;

// Best effort, never blocking: for answers the reader gives itself before
// it closes the connection.
void SendNow(net::Connection& conn, const HttpResponse& r) {
  conn.WriteAvailable(FormatResponse(r)).status().IgnoreError();
}

// Starting TLS handshakes, per peer: a token bucket.
class HandshakeRate {
 public:
  bool Allow(const std::string& peer, Clock::time_point now) {
    auto [it, fresh] = buckets_.try_emplace(peer, Bucket{kHandshakeBurst, now});
    Bucket& b = it->second;
    b.tokens =
        std::min(kHandshakeBurst, b.tokens + kHandshakesPerSecond *
                                                 std::chrono::duration<double>(now - b.at).count());
    b.at = now;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
  // Forgets peers whose bucket has filled again.
  void Sweep(Clock::time_point now) {
    std::erase_if(buckets_, [&](const auto& entry) {
      return now - entry.second.at >
             std::chrono::duration<double>(kHandshakeBurst / kHandshakesPerSecond);
    });
  }

 private:
  struct Bucket {
    double tokens;
    Clock::time_point at;
  };
  std::map<std::string, Bucket> buckets_;
};

core::Status Failed(const std::string& what, int fd) {
  const std::string why = std::strerror(errno);
  if (fd >= 0) close(fd);
  return core::Unavailable("cannot serve on " + what + ": " + why);
}

}  // namespace

// What a late answer reaches: the server while it runs, nothing after.
struct HttpServer::Shared {
  core::Mutex mu;
  HttpServer* server GLEANER_GUARDED_BY(mu) = nullptr;
};

core::Result<std::unique_ptr<HttpServer>> HttpServer::ServeUnix(const std::string& path,
                                                                Handler handler,
                                                                ConnectionPool* pool) {
  GLEANER_ASSIGN_OR_RETURN(sockaddr_un addr, net::UnixAddress(path));
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
      new HttpServer(fd, true, "unix:" + path, path, std::move(handler), nullptr,
                     pool != nullptr ? pool : &ConnectionPool::Unix()));
}

core::Result<std::unique_ptr<HttpServer>> HttpServer::ServeTcp(
    const std::string& host, uint16_t port, Handler handler,
    std::shared_ptr<const net::TlsContext> tls, ConnectionPool* pool) {
  GLEANER_ASSIGN_OR_RETURN(net::TcpAddress addr, net::ResolveTcp(host, port));
  const std::string where = net::FormatHostPort(host, port);
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
  return std::unique_ptr<HttpServer>(new HttpServer(
      fd, false, scheme + net::FormatHostPort(host, bound_port), "", std::move(handler),
      std::move(tls), pool != nullptr ? pool : &ConnectionPool::Tcp()));
}

HttpServer::HttpServer(int fd, bool unix_socket, std::string address, std::string socket_path,
                       Handler handler, std::shared_ptr<const net::TlsContext> tls,
                       ConnectionPool* pool)
    : fd_(fd),
      unix_socket_(unix_socket),
      address_(std::move(address)),
      socket_path_(std::move(socket_path)),
      handler_(std::move(handler)),
      tls_(std::move(tls)),
      pool_(pool),
      shared_(std::make_shared<Shared>()) {
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
  shared_->server = this;
  for (int i = 0; i < kWorkers; ++i) workers_.emplace_back([this] { Work(); });
  if (tls_) {
    for (int i = 0; i < kHandshakers; ++i) handshakers_.emplace_back([this] { Shake(); });
  }
  reader_ = std::thread([this] { Read(); });
}

HttpServer::~HttpServer() {
  {
    core::MutexLock lock(shared_->mu);
    shared_->server = nullptr;
  }
  {
    // Under the lock, so no worker misses the wake-up between its check
    // and its wait.
    core::MutexLock lock(mu_);
    stop_ = true;
  }
  ready_.notify_all();
  shake_.notify_all();
  WakeReader();
  reader_.join();
  for (std::thread& w : workers_) w.join();
  for (std::thread& h : handshakers_) h.join();
  // Not answered: we are stopping. Their connections close with them.
  complete_.clear();
  returned_.clear();
  handshakes_.clear();
  shaken_.clear();
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
  // A connection the reader polls, and what it waits for.
  struct Open {
    enum class Phase {
      kHandshake,  // TLS, between steps of its handshake
      kReading,    // a request under way (or a new connection's first)
      kIdle,       // kept alive, no byte of a next request yet
      kWriting,    // its answer, as the client takes it
      kDraining,   // answered early: dropping what still comes, then closed
    };
    std::unique_ptr<net::Connection> conn;
    ConnectionPool::Slot slot;
    Peer peer;
    Phase phase = Phase::kReading;
    Clock::time_point deadline;
    std::string received;  // of the request under way, and any after it
    std::string out;       // kWriting: the answer
    size_t written = 0;
    bool keep_alive = false;  // after kWriting: read the next request
    bool drain = false;       // after kWriting: kDraining
    size_t drained = 0;
  };
  using Phase = Open::Phase;
  std::map<int, Open> open;
  HandshakeRate handshake_rate;
  const auto drop = [&](std::map<int, Open>::iterator it) { return open.erase(it); };
  // A request whole (or malformed) goes to the workers; true when it did.
  const auto hand_over = [&](std::map<int, Open>::iterator it) {
    ParsedRequest parsed = ParseRequest(it->second.received);
    if (parsed.kind == ParsedRequest::Kind::kIncomplete) return false;
    Complete c;
    c.keep_alive = parsed.kind == ParsedRequest::Kind::kComplete && parsed.request.keep_alive;
    if (parsed.kind == ParsedRequest::Kind::kComplete) {
      c.rest = it->second.received.substr(parsed.consumed);
    }
    c.conn = std::move(it->second.conn);
    c.slot = std::move(it->second.slot);
    c.peer = it->second.peer;
    c.parsed = std::move(parsed);
    drop(it);
    core::MutexLock lock(mu_);
    complete_.push_back(std::move(c));
    ready_.notify_one();
    return true;
  };
  const auto read_some = [&](std::map<int, Open>::iterator it) {
    Open& o = it->second;
    const net::Connection::Got got =
        o.conn->ReadAvailable(&o.received, kMaxHeaderBytes + kMaxBodyBytes + 4);
    if (got == net::Connection::Got::kFailed) {
      drop(it);
      return;
    }
    if (got == net::Connection::Got::kData && o.phase == Phase::kIdle) {
      o.phase = Phase::kReading;
      o.deadline = Clock::now() + kRequestDeadline;
    }
    // A client may end its side once it has sent all: what it sent is
    // answered. Only an incomplete request from a client that left is
    // dropped.
    if (!hand_over(it) && got == net::Connection::Got::kEnded) drop(it);
  };
  const auto write_some = [&](std::map<int, Open>::iterator it) {
    Open& o = it->second;
    while (o.written < o.out.size()) {
      const core::Result<size_t> n =
          o.conn->WriteAvailable(std::string_view(o.out).substr(o.written));
      if (!n.ok()) {
        drop(it);
        return;
      }
      if (*n == 0) return;  // the client has not taken more yet
      o.written += *n;
    }
    o.out.clear();
    o.written = 0;
    const auto now = Clock::now();
    if (o.drain) {
      shutdown(o.conn->fd(), SHUT_WR);
      o.phase = Phase::kDraining;
      o.deadline = now + kDrainFor;
    } else if (!o.keep_alive) {
      drop(it);
    } else if (o.received.empty()) {
      o.phase = Phase::kIdle;
      o.deadline = now + kIdleLimit;
    } else {  // pipelined
      o.phase = Phase::kReading;
      o.deadline = now + kRequestDeadline;
      hand_over(it);
    }
  };
  const auto drain_some = [&](std::map<int, Open>::iterator it) {
    char buf[16384];
    while (true) {
      const ssize_t n = recv(it->second.conn->fd(), buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0 || (it->second.drained += static_cast<size_t>(n)) > kMaxDrained) {
        drop(it);
        return;
      }
    }
  };
  const auto evict_idlest = [&] {
    auto victim = open.end();
    for (auto it = open.begin(); it != open.end(); ++it) {
      if (it->second.phase == Phase::kIdle &&
          (victim == open.end() || it->second.deadline < victim->second.deadline)) {
        victim = it;
      }
    }
    if (victim == open.end()) return false;
    drop(victim);
    return true;
  };
  std::vector<pollfd> polled;
  // Deadlines are seconds long: they are swept a few times a second, not
  // on every wake-up, which with thousands of held long polls and
  // connections would cost more than the requests themselves.
  auto next_sweep = Clock::now();
  while (!stop_) {
    bool full;
    std::vector<Complete> back;
    std::vector<Handshaking> shaken;
    std::vector<uint64_t> expired;
    const auto now = Clock::now();
    const bool sweep = now >= next_sweep;
    if (sweep) next_sweep = now + kSweepEvery;
    {
      core::MutexLock lock(mu_);
      full = complete_.size() >= kMaxWaiting;
      back.swap(returned_);
      shaken.swap(shaken_);
      if (sweep) {
        for (const auto& [id, p] : parked_) {
          if (p.deadline <= now) expired.push_back(id);
        }
      }
    }
    for (const uint64_t id : expired) Unpark(id, std::nullopt);
    for (Complete& c : back) {
      const int fd = c.conn->fd();
      Open o;
      o.conn = std::move(c.conn);
      o.slot = std::move(c.slot);
      o.peer = c.peer;
      o.phase = Phase::kWriting;
      o.deadline = now + kAnswerDeadline;
      o.received = std::move(c.rest);
      o.out = std::move(c.out);
      o.keep_alive = c.keep_alive;
      o.drain = c.drain;
      write_some(open.emplace(fd, std::move(o)).first);
    }
    for (Handshaking& h : shaken) {
      if (h.got == net::Connection::Got::kFailed) continue;  // closed with it
      const int fd = h.conn->fd();
      Open o;
      o.conn = std::move(h.conn);
      o.slot = std::move(h.slot);
      o.peer = h.peer;
      o.deadline = h.deadline;
      o.phase = h.got == net::Connection::Got::kData ? Phase::kReading : Phase::kHandshake;
      auto it = open.emplace(fd, std::move(o)).first;
      // Its request may have come with the handshake's last message.
      if (it->second.phase == Phase::kReading) read_some(it);
    }
    if (sweep) {
      handshake_rate.Sweep(now);
      for (auto it = open.begin(); it != open.end();) {
        if (now < it->second.deadline) {
          ++it;
          continue;
        }
        if (it->second.phase == Phase::kReading) {
          SendNow(*it->second.conn,
                  ErrorResponse(core::InvalidArgument("the request did not arrive within 10 s")));
        }
        it = drop(it);
      }
    }
    polled.clear();
    polled.push_back({wake_[0], POLLIN, 0});
    polled.push_back({fd_, static_cast<short>(full ? 0 : POLLIN), 0});
    for (const auto& [fd, o] : open) {
      short events = 0;
      switch (o.phase) {
        case Phase::kHandshake:
          events = static_cast<short>(POLLIN | (o.conn->wants_write() ? POLLOUT : 0));
          break;
        case Phase::kReading:
        case Phase::kIdle:
          // While the workers' queue is full, nothing more is read.
          if (!full) events = static_cast<short>(POLLIN | (o.conn->wants_write() ? POLLOUT : 0));
          break;
        case Phase::kWriting:
          events = static_cast<short>(POLLOUT | (o.conn->wants_read() ? POLLIN : 0));
          break;
        case Phase::kDraining:
          events = POLLIN;
          break;
      }
      polled.push_back({fd, events, 0});
    }
    if (poll(polled.data(), polled.size(), 100) <= 0) continue;
    if (polled[0].revents != 0) {
      char buf[256];
      while (read(wake_[0], buf, sizeof buf) > 0) {
      }
    }
    for (size_t i = 2; i < polled.size(); ++i) {
      if (polled[i].revents == 0) continue;
      auto it = open.find(polled[i].fd);
      if (it == open.end()) continue;
      switch (it->second.phase) {
        case Phase::kHandshake: {
          Handshaking h{std::move(it->second.conn), std::move(it->second.slot), it->second.peer,
                        it->second.deadline};
          drop(it);
          core::MutexLock lock(mu_);
          handshakes_.push_back(std::move(h));
          shake_.notify_one();
          break;
        }
        case Phase::kReading:
        case Phase::kIdle:
          read_some(it);
          break;
        case Phase::kWriting:
          write_some(it);
          break;
        case Phase::kDraining:
          drain_some(it);
          break;
      }
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
      Open o;
      o.deadline = Clock::now() + kRequestDeadline;
      std::string peer_key;
      if (unix_socket_) {
        ucred cred{};
        socklen_t len = sizeof cred;
        if (getsockopt(client, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
          close(client);
          continue;
        }
        o.peer.uid = cred.uid;
        peer_key = "uid " + std::to_string(cred.uid);
      } else {
        peer_key = net::PeerAddress(from);
      }
      // Root on the socket is always served: it is how the host's admin
      // reaches a daemon under attack.
      const bool unlimited = o.peer.uid == 0u;
      ConnectionPool::Refusal refused = pool_->Take(peer_key, unlimited, &o.slot);
      if (refused == ConnectionPool::Refusal::kPoolFull && evict_idlest()) {
        refused = pool_->Take(peer_key, unlimited, &o.slot);
      }
      if (refused != ConnectionPool::Refusal::kNone) {
        // A TLS client has not shaken hands: it could not read the words.
        if (tls_) {
          close(client);
          continue;
        }
        const ConnectionLimits limits = pool_->limits();
        net::Connection refusal(client);
        SendNow(refusal,
                ErrorResponse(refused == ConnectionPool::Refusal::kPeerFull
                                  ? core::ResourceExhausted(
                                        "too many open connections from " + peer_key + " (" +
                                        std::to_string(limits.per_peer) + "); close some first")
                                  : core::Unavailable(
                                        "the server holds all the connections it may (" +
                                        std::to_string(limits.total) + "); try again shortly")));
        continue;
      }
      if (tls_ && !handshake_rate.Allow(peer_key, Clock::now())) {
        close(client);  // the slot goes back with `o`
        continue;
      }
      o.conn = tls_ ? net::Connection::AcceptTls(client, *tls_)
                    : std::make_unique<net::Connection>(client);
      if (o.conn == nullptr) continue;
      o.phase = tls_ ? Phase::kHandshake : Phase::kReading;
      const int fd = o.conn->fd();
      open.emplace(fd, std::move(o));
    }
  }
  open.clear();
}

void HttpServer::Shake() {
  while (true) {
    Handshaking h;
    {
      core::MutexLock lock(mu_);
      mu_.Await(shake_, [this] {
        mu_.AssertHeld();
        return stop_ || !handshakes_.empty();
      });
      if (stop_) return;
      h = std::move(handshakes_.front());
      handshakes_.pop_front();
    }
    h.got = h.conn->Handshake();
    if (h.got == net::Connection::Got::kFailed && h.conn->got_plain_http()) {
      // Said in plain text, the only language this client speaks.
      const std::string out = FormatResponse(ErrorResponse(core::InvalidArgument(
          "this port speaks TLS: use https:// for it (and --ca-file for a private CA)")));
      [[maybe_unused]] const ssize_t n =
          send(h.conn->fd(), out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    {
      core::MutexLock lock(mu_);
      shaken_.push_back(std::move(h));
    }
    WakeReader();
  }
}

void HttpServer::Work() {
  while (true) {
    Complete c;
    {
      core::MutexLock lock(mu_);
      mu_.Await(ready_, [this] {
        mu_.AssertHeld();
        return stop_ || !complete_.empty();
      });
      if (stop_) return;  // the destructor closes what is left unanswered
      c = std::move(complete_.front());
      complete_.pop_front();
    }
    if (c.answer) {
      const HttpResponse answer = std::move(*c.answer);
      Answer(std::move(c), answer);
    } else if (c.parsed.kind == ParsedRequest::Kind::kError) {
      HttpResponse r = ErrorResponse(core::InvalidArgument(c.parsed.error));
      r.status = c.parsed.error_status;
      c.keep_alive = false;
      c.drain = true;
      Answer(std::move(c), r);
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
  c.keep_alive = c.keep_alive && !stop_;
  c.out = FormatResponse(response, c.keep_alive);
  c.answer.reset();
  // A descriptor travels with the answer's first bytes; only a Unix socket
  // can carry one (the API hands them out only there).
  if (response.descriptor != nullptr && unix_socket_ && !c.conn->tls()) {
    const core::Result<size_t> sent =
        SendWithDescriptor(c.conn->fd(), c.out, response.descriptor->fd);
    if (!sent.ok()) return;  // closed with `c`
    c.out.erase(0, *sent);
  }
  {
    core::MutexLock lock(mu_);
    returned_.push_back(std::move(c));
  }
  WakeReader();
}

void HttpServer::Park(Complete c, HttpResponse response) {
  const std::shared_ptr<LaterResponse> later = std::move(response.later);
  response.later = nullptr;
  uint64_t id;
  {
    core::MutexLock lock(mu_);
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
    core::MutexLock lock(shared->mu);
    if (shared->server != nullptr) shared->server->Unpark(id, std::move(answer));
  });
}

void HttpServer::Unpark(uint64_t id, std::optional<HttpResponse> answer) {
  core::MutexLock lock(mu_);
  const auto it = parked_.find(id);
  if (it == parked_.end()) return;
  Complete c = std::move(it->second.held);
  c.answer = answer ? std::move(*answer) : std::move(it->second.on_timeout);
  parked_.erase(it);
  complete_.push_back(std::move(c));
  ready_.notify_one();
}

}  // namespace gleaner::server
