#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace gleaner::core {

// Tells the service manager how a daemon is doing (systemd's Type=notify
// protocol: datagrams to the socket NOTIFY_SOCKET names), so `systemctl
// start` returns once the daemon serves, and a daemon whose main loop hangs
// is restarted by the watchdog. Where no manager listens it does nothing.
// Thread-compatible.
class ServiceNotifier {
 public:
  // Reads NOTIFY_SOCKET and WATCHDOG_USEC (honoured only when WATCHDOG_PID,
  // if set, is this process) and removes them from the environment, so no
  // program the daemon starts can speak for it.
  static ServiceNotifier FromEnvironment();

  bool enabled() const { return !socket_.empty(); }
  // How often the manager wants to hear Alive(); nullopt without a watchdog.
  std::optional<std::chrono::microseconds> watchdog() const { return watchdog_; }

  // READY=1 with a status line: the daemon serves.
  void Ready(const std::string& status) const;
  // From the main loop, each time round: WATCHDOG=1 whenever half the
  // watchdog interval has passed since the last one.
  void Alive();
  // STOPPING=1: a stop was asked for and the daemon is on its way out.
  void Stopping() const;

 private:
  void Send(const std::string& message) const;

  std::string socket_;  // a path, or "@name" for an abstract socket
  std::optional<std::chrono::microseconds> watchdog_;
  std::chrono::steady_clock::time_point last_alive_{};
};

// The syslog priority journald should file a daemon's log line under: 3
// (error) for lines that start "error:", 4 (warning) for "warning:",
// "cannot " or a failure, else 6 (info).
int JournalPriority(const std::string& line);

// Whether `fd` is the stream journald reads this service's output from
// (JOURNAL_STREAM, "device:inode", names it): then log lines carry their
// priority as a "<N>" prefix and no time of their own.
bool WritesToJournal(int fd);

}  // namespace gleaner::core
