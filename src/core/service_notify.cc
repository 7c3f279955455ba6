#include "core/service_notify.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

namespace gleaner::core {

ServiceNotifier ServiceNotifier::FromEnvironment() {
  ServiceNotifier n;
  if (const char* socket = std::getenv("NOTIFY_SOCKET"); socket != nullptr) {
    // Only a path or an abstract name fits a sockaddr_un.
    if ((socket[0] == '/' || socket[0] == '@') &&
        std::strlen(socket) < sizeof(sockaddr_un{}.sun_path)) {
      n.socket_ = socket;
    }
  }
  const char* usec = std::getenv("WATCHDOG_USEC");
  const char* pid = std::getenv("WATCHDOG_PID");
  if (usec != nullptr && (pid == nullptr || std::strtol(pid, nullptr, 10) == getpid())) {
    char* end = nullptr;
    const long long us = std::strtoll(usec, &end, 10);
    if (end != usec && *end == '\0' && us > 0) n.watchdog_ = std::chrono::microseconds(us);
  }
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");
  unsetenv("WATCHDOG_PID");
  return n;
}

void ServiceNotifier::Send(const std::string& message) const {
  if (socket_.empty()) return;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_.data(), socket_.size());
  socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_.size());
  if (socket_[0] == '@') {
    addr.sun_path[0] = '\0';  // abstract: no terminating NUL counts
  } else {
    ++length;
  }
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  // Best effort: a manager that is gone must not stop the daemon.
  (void)sendto(fd, message.data(), message.size(), MSG_NOSIGNAL,
               reinterpret_cast<const sockaddr*>(&addr), length);
  close(fd);
}

void ServiceNotifier::Ready(const std::string& status) const {
  std::string line = status;
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  Send("READY=1\nSTATUS=" + line);
}

void ServiceNotifier::Alive() {
  if (!watchdog_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_alive_ < *watchdog_ / 2) return;
  last_alive_ = now;
  Send("WATCHDOG=1");
}

void ServiceNotifier::Stopping() const { Send("STOPPING=1"); }

int JournalPriority(const std::string& line) {
  const std::string_view l(line);
  if (l.starts_with("error:")) return 3;
  if (l.starts_with("warning:") || l.starts_with("cannot ") ||
      l.find(" failed") != std::string_view::npos) {
    return 4;
  }
  return 6;
}

bool WritesToJournal(int fd) {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  struct stat st {};
  if (fstat(fd, &st) != 0) return false;
  const std::string expected = std::to_string(static_cast<unsigned long long>(st.st_dev)) + ":" +
                               std::to_string(static_cast<unsigned long long>(st.st_ino));
  return expected == stream;
}

}  // namespace gleaner::core
