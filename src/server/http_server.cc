#include "server/http_server.h"

#include <arpa/inet.h>
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

#include "server/socket_address.h"

namespace gleaner::server {
namespace {

constexpr int kWorkers = 16;
// Accepted connections waiting for a worker; beyond this they wait in the
// kernel's backlog, holding none of gleaner's file descriptors.
constexpr size_t kMaxWaiting = 64;

void SetTimeouts(int fd, int seconds) {
  timeval tv{seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
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
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Failed(path, -1);
  unlink(path.c_str());  // a socket left by a gleaner that was killed
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
  const int fd = socket(addr.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
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
  acceptor_ = std::thread([this] { Accept(); });
}

HttpServer::~HttpServer() {
  {
    // Under the lock, so no worker misses the wake-up between its check
    // and its wait.
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  ready_.notify_all();
  acceptor_.join();
  for (std::thread& w : workers_) w.join();
  for (int client : accepted_) close(client);  // not answered: we are stopping
  close(fd_);
  if (unix_socket_) unlink(socket_path_.c_str());
}

void HttpServer::Accept() {
  while (!stop_) {
    {
      // Full: leave connections in the kernel's backlog until a worker
      // frees up, rather than holding descriptors for them.
      std::unique_lock lock(mu_);
      if (accepted_.size() >= kMaxWaiting) {
        lock.unlock();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
    }
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 100) != 1) continue;
    const int client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      // Out of descriptors (EMFILE, ENFILE): back off instead of spinning.
      if (errno == EMFILE || errno == ENFILE) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      continue;
    }
    std::lock_guard lock(mu_);
    accepted_.push_back(client);
    ready_.notify_one();
  }
}

void HttpServer::Work() {
  while (true) {
    int client;
    {
      std::unique_lock lock(mu_);
      ready_.wait(lock, [this] { return stop_ || !accepted_.empty(); });
      if (stop_) return;  // the destructor closes what is left unanswered
      client = accepted_.front();
      accepted_.pop_front();
    }
    try {
      Answer(client);
    } catch (const std::exception& e) {
      // A bug or exhausted memory in one request must not end the daemon.
      WriteResponse(client, ErrorResponse(core::Internal(e.what())));
    }
    close(client);
  }
}

void HttpServer::Answer(int client) {
  SetTimeouts(client, 5);
  Peer peer;
  if (unix_socket_) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (getsockopt(client, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return;
    peer.uid = cred.uid;
  }
  auto request = ReadRequest(client);
  if (request.ok()) {
    WriteResponse(client, handler_(*request, peer));
  } else if (request.status().code() != core::StatusCode::kUnavailable) {
    HttpResponse r = ErrorResponse(request.status());
    if (request.status().code() == core::StatusCode::kFailedPrecondition) r.status = 413;
    WriteResponse(client, r);
  }
}

}  // namespace gleaner::server
