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

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <map>

#include "server/socket_address.h"

namespace gleaner::server {
namespace {

constexpr int kWorkers = 16;
// Complete requests waiting for a worker; while it is full, nothing more
// is read or accepted (connections wait in the kernel's backlog).
constexpr size_t kMaxWaiting = 64;
// Connections still sending their request. Reading them costs no worker,
// only a descriptor and their bytes so far; the caps keep one peer (an IP
// address, or a local uid) from holding them all.
constexpr size_t kMaxReading = 4096;
constexpr size_t kMaxReadingPerPeer = 256;
// All of a request must arrive within this; a worker then has it whole.
constexpr auto kRequestDeadline = std::chrono::seconds(10);

void SetSendTimeout(int fd, int seconds) {
  timeval tv{seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void SetBlocking(int fd, bool blocking) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK);
}

// Best effort, never blocking: for answers the reader gives itself.
void SendNow(int fd, const HttpResponse& r) {
  const std::string out = FormatResponse(r);
  [[maybe_unused]] const ssize_t n = send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
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

core::Result<std::unique_ptr<HttpServer>> HttpServer::ServeUnix(const std::string& path,
                                                                Handler handler) {
  GLEANER_ASSIGN_OR_RETURN(sockaddr_un addr, UnixAddress(path));
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Failed(path, -1);
  // A socket left by a gleaner that was killed; anything else by that name
  // (a file, a link) is not ours to remove.
  struct stat st{};
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
      new HttpServer(fd, true, "unix:" + path, path, std::move(handler)));
}

core::Result<std::unique_ptr<HttpServer>> HttpServer::ServeTcp(const std::string& host,
                                                               uint16_t port, Handler handler) {
  GLEANER_ASSIGN_OR_RETURN(TcpAddress addr, ResolveTcp(host, port));
  const std::string where = FormatHostPort(host, port);
  const int fd = socket(addr.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Failed(where, -1);
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr.storage), addr.length) != 0 ||
      listen(fd, 256) != 0) {
    return Failed(where, fd);
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  const uint16_t bound_port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return std::unique_ptr<HttpServer>(new HttpServer(
      fd, false, "http://" + FormatHostPort(host, bound_port), "", std::move(handler)));
}

HttpServer::HttpServer(int fd, bool unix_socket, std::string address, std::string socket_path,
                       Handler handler)
    : fd_(fd),
      unix_socket_(unix_socket),
      address_(std::move(address)),
      socket_path_(std::move(socket_path)),
      handler_(std::move(handler)) {
  for (int i = 0; i < kWorkers; ++i) workers_.emplace_back([this] { Work(); });
  reader_ = std::thread([this] { Read(); });
}

HttpServer::~HttpServer() {
  {
    // Under the lock, so no worker misses the wake-up between its check
    // and its wait.
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  ready_.notify_all();
  reader_.join();
  for (std::thread& w : workers_) w.join();
  for (const Complete& c : complete_) close(c.fd);  // not answered: we are stopping
  close(fd_);
  if (unix_socket_) unlink(socket_path_.c_str());
}

void HttpServer::Read() {
  struct Reading {
    std::string received;
    std::chrono::steady_clock::time_point deadline;
    Peer peer;
    std::string peer_key;
  };
  std::map<int, Reading> reading;
  std::map<std::string, size_t> per_peer;
  const auto drop = [&](std::map<int, Reading>::iterator it) {
    if (--per_peer[it->second.peer_key] == 0) per_peer.erase(it->second.peer_key);
    close(it->first);
    return reading.erase(it);
  };
  std::vector<pollfd> polled;
  char buf[16384];
  while (!stop_) {
    bool full;
    {
      std::lock_guard lock(mu_);
      full = complete_.size() >= kMaxWaiting;
    }
    const auto now = std::chrono::steady_clock::now();
    for (auto it = reading.begin(); it != reading.end();) {
      if (now < it->second.deadline) {
        ++it;
        continue;
      }
      SendNow(it->first, ErrorResponse(core::InvalidArgument(
                             "the request did not arrive within 10 s")));
      it = drop(it);
    }
    polled.clear();
    if (!full) {
      polled.push_back({fd_, POLLIN, 0});
      for (const auto& [fd, unused] : reading) polled.push_back({fd, POLLIN, 0});
    }
    if (poll(polled.data(), polled.size(), 100) <= 0) {
      if (full) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    for (size_t i = 1; i < polled.size(); ++i) {
      if (polled[i].revents == 0) continue;
      auto it = reading.find(polled[i].fd);
      ssize_t n;
      while ((n = recv(it->first, buf, sizeof buf, 0)) > 0) {
        it->second.received.append(buf, static_cast<size_t>(n));
        if (it->second.received.size() > kMaxHeaderBytes + kMaxBodyBytes + 4) break;
      }
      // A client may end its side once it has sent all: what it sent is
      // answered. Only an incomplete request from a client that left is
      // dropped.
      const bool ended =
          n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
      ParsedRequest parsed = ParseRequest(it->second.received);
      if (parsed.kind == ParsedRequest::Kind::kIncomplete) {
        if (ended) drop(it);
        continue;
      }
      Complete c{it->first, it->second.peer, std::move(parsed)};
      if (--per_peer[it->second.peer_key] == 0) per_peer.erase(it->second.peer_key);
      reading.erase(it);
      std::lock_guard lock(mu_);
      complete_.push_back(std::move(c));
      ready_.notify_one();
    }
    if (polled[0].revents == 0) continue;
    for (int accepted = 0; accepted < 64; ++accepted) {
      sockaddr_storage from{};
      socklen_t from_len = sizeof from;
      const int client = accept4(fd_, reinterpret_cast<sockaddr*>(&from), &from_len,
                                 SOCK_CLOEXEC | SOCK_NONBLOCK);
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
      if (per_peer[r.peer_key] >= kMaxReadingPerPeer) {
        SendNow(client, ErrorResponse(core::ResourceExhausted(
                            "too many open connections from " + r.peer_key +
                            "; finish or close some first")));
        close(client);
        continue;
      }
      if (reading.size() >= kMaxReading) {
        // The oldest waits longest for its request: it goes first.
        auto oldest = std::min_element(reading.begin(), reading.end(), [](auto& a, auto& b) {
          return a.second.deadline < b.second.deadline;
        });
        drop(oldest);
      }
      ++per_peer[r.peer_key];
      reading.emplace(client, std::move(r));
    }
  }
  for (auto it = reading.begin(); it != reading.end();) it = drop(it);
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
    SetBlocking(c.fd, true);
    SetSendTimeout(c.fd, 5);
    if (c.parsed.kind == ParsedRequest::Kind::kError) {
      HttpResponse r = ErrorResponse(core::InvalidArgument(c.parsed.error));
      r.status = c.parsed.error_status;
      WriteResponse(c.fd, r);
      DrainBeforeClose(c.fd);
    } else {
      try {
        WriteResponse(c.fd, handler_(c.parsed.request, c.peer));
      } catch (const std::exception& e) {
        // A bug or exhausted memory in one request must not end the daemon.
        WriteResponse(c.fd, ErrorResponse(core::Internal(e.what())));
      }
    }
    close(c.fd);
  }
}

}  // namespace gleaner::server
