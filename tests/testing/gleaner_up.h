#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner::testing {

// A loopback port nobody listens on now.
inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// Kills the process whose pid is in `pid_file` when it goes out of scope.
struct KillOnExit {
  explicit KillOnExit(std::string file) : pid_file(std::move(file)) {}
  KillOnExit(const KillOnExit&) = delete;
  KillOnExit& operator=(const KillOnExit&) = delete;
  ~KillOnExit() {
    const std::string pid = Slurp(pid_file);
    if (!pid.empty()) kill(std::stoi(pid), SIGTERM);
  }
  std::string pid_file;
};

// Starts `gleaner up --fake demo` with its data in `data`, serving TCP on
// `port`, for at most `for_s` seconds; killed with the returned guard.
// Waits for its socket. Its log is `dir`/up.log.
inline KillOnExit StartGleanerUp(const TempDir& dir, const std::string& data, int port,
                                 int for_s = 90) {
  const std::string pid_file = (dir.path() / "gleaner.pid").string();
  const int rc = std::system((std::string(GLEANER_BINARY) + " up --fake demo --data-dir " + data +
                              " --listen 127.0.0.1:" + std::to_string(port) + " --for " +
                              std::to_string(for_s) + " >" + (dir.path() / "up.log").string() +
                              " 2>&1 & echo $! >" + pid_file)
                                 .c_str());
  EXPECT_EQ(rc, 0);
  for (int i = 0; i < 400 && !std::filesystem::exists(data + "/gleaner.sock"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  // The TCP listener opens after the socket: wait for it too.
  for (int i = 0; i < 400; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool up = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    if (up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return KillOnExit{pid_file};  // a prvalue: no copy that would kill it early
}

}  // namespace gleaner::testing
