#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gleaner::testing {

// A webhook receiver on 127.0.0.1 for tests: records every request body
// and answers with the given status codes in turn (the last one repeats),
// and `headers` ("Name: value\r\n" lines).
class HttpReceiver {
 public:
  explicit HttpReceiver(std::vector<int> statuses = {200}, std::string headers = "")
      : statuses_(std::move(statuses)), headers_(std::move(headers)) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    listen(fd_, 16);
    thread_ = std::thread([this] { Serve(); });
  }
  ~HttpReceiver() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }

  std::string url(const std::string& path = "/hook") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::vector<std::string> bodies() const {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  int requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }
  // Waits until at least `n` requests arrived (true) or `seconds` passed.
  bool WaitFor(int n, double seconds) const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
      if (requests() >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return requests() >= n;
  }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) != 1) continue;
      const int client = accept(fd_, nullptr, nullptr);
      if (client < 0) continue;
      std::string data;
      char buf[4096];
      size_t body_at = std::string::npos;
      size_t length = 0;
      while (true) {
        const ssize_t n = recv(client, buf, sizeof buf, 0);
        if (n <= 0) break;
        data.append(buf, static_cast<size_t>(n));
        if (body_at == std::string::npos &&
            (body_at = data.find("\r\n\r\n")) != std::string::npos) {
          body_at += 4;
          const size_t cl = data.find("Content-Length: ");
          if (cl != std::string::npos) length = std::stoul(data.substr(cl + 16));
        }
        if (body_at != std::string::npos && data.size() >= body_at + length) break;
      }
      int status;
      {
        std::lock_guard lock(mu_);
        status = statuses_[std::min(static_cast<size_t>(requests_), statuses_.size() - 1)];
        ++requests_;
        if (body_at != std::string::npos) bodies_.push_back(data.substr(body_at, length));
      }
      const std::string response = "HTTP/1.1 " + std::to_string(status) + " X\r\n" + headers_ +
                                   "Content-Length: 0\r\nConnection: close\r\n\r\n";
      send(client, response.data(), response.size(), MSG_NOSIGNAL);
      close(client);
    }
  }

  std::vector<int> statuses_;
  std::string headers_;
  int fd_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<std::string> bodies_;
  int requests_ = 0;
  std::thread thread_;
};

}  // namespace gleaner::testing
