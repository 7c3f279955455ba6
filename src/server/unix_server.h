#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "core/result.h"
#include "server/http_message.h"

namespace gleaner::server {

// Serves HTTP on a Unix socket in its own thread, one connection at a
// time. Every local user may connect (mode 0666); the caller's uid comes
// from the kernel (SO_PEERCRED), so nobody can claim to be someone else.
class UnixServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&, uint32_t uid)>;

  // Binds `path` (replacing a stale socket) and starts serving.
  static core::Result<std::unique_ptr<UnixServer>> Start(const std::string& path, Handler handler);
  ~UnixServer();  // stops, and removes the socket file
  UnixServer(const UnixServer&) = delete;
  UnixServer& operator=(const UnixServer&) = delete;

 private:
  UnixServer(int fd, std::string path, Handler handler);
  void Serve();

  int fd_;
  std::string path_;
  Handler handler_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A client's request over the socket: the status and the body.
core::Result<std::pair<int, std::string>> UnixRequest(const std::string& path,
                                                      const std::string& method,
                                                      const std::string& target,
                                                      const std::string& body);

}  // namespace gleaner::server
