#pragma once

#include <atomic>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "cluster/log.h"
#include "config/config_file.h"
#include "core/mutex.h"
#include "core/result.h"
#include "core/service_notify.h"
#include "net/tls.h"
#include "store/sqlite_store.h"

// What every long-running command (`gleaner up`, `monitor`, `server`,
// `agent`) starts from and stops by.
namespace gleaner::daemon {

// Jobs' logs, the API's connections and /proc all need descriptors; the
// soft limit (often 1024) is raised to the hard one, so a burst of
// clients cannot starve the daemon's loop.
void RaiseFileLimit();

// Whether an API on `listen` (HOST:PORT) is reachable from other hosts.
bool ListensBeyondLoopback(const std::string& listen);

// The server context the options name; null when no --tls-cert was given
// (and none of the others either: alone they are refused).
core::Result<std::shared_ptr<const net::TlsContext>> ServerTls(const net::TlsFiles& tls);

// The config at `path` (`must_exist`: named by --config), with
// `--interval` laid over it (and the gap that still counts as one sample
// widened to three intervals). `text`, when given, gets the text it was
// read from, "" where there is no file: what a reload compares with.
core::Result<config::GleanerConfig> LoadDaemonConfig(const std::string& path, bool must_exist,
                                                     std::optional<double> interval_s,
                                                     std::string* text = nullptr);

// What every daemon starts from: its data directory and its config.
struct DaemonBase {
  std::string data_dir;
  std::string config_path;
  config::GleanerConfig config;
  std::string config_text;  // what `config` was read from ("": no file)
  // systemd's Type=notify: ready, watchdog pings, stopping.
  core::ServiceNotifier notifier;
};

// The store `gleaner up` (or `monitor`) keeps in `data_dir`, opened for a
// command that reads its history; NotFound (saying what to run) where
// there is none, and a clear error where it cannot be looked at.
core::Result<std::unique_ptr<store::SqliteStore>> OpenHistory(const std::string& data_dir);

// A daemon that pings systemd's watchdog once a sampling pass must pass
// at least twice a watchdog interval; refused (saying what to change) when
// `interval` is longer than half of it.
core::Status CheckWatchdog(const core::ServiceNotifier& notifier, core::Duration interval);

// A log line at a time to `out`, each with its UTC time; `mu` serialises
// writers on several threads.
cluster::Log TimestampedLog(std::ostream& out, core::Mutex& mu);

// Until SIGINT, SIGTERM or `for_s` seconds: the flag a daemon's loop
// watches; and SIGHUP, which asks it to read its config again. One per
// process.
class StopSignal {
 public:
  explicit StopSignal(std::optional<double> for_s);
  ~StopSignal();  // signals back to their defaults
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  const std::atomic<bool>& flag() const;
  bool stopped() const { return flag().load(); }
  // Whether SIGHUP came since the last call.
  static bool TakeHangup();

 private:
  std::thread deadline_;
};

}  // namespace gleaner::daemon
