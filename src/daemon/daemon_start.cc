#include "daemon/daemon_start.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <ostream>

#include "core/civil_time.h"
#include "core/format.h"
#include "core/private_file.h"
#include "net/socket_address.h"

namespace gleaner::daemon {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void RequestStop(int) { g_stop.store(true); }

std::atomic<bool> g_hangup{false};
extern "C" void RequestReload(int) { g_hangup.store(true); }

}  // namespace

void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

bool ListensBeyondLoopback(const std::string& listen) {
  auto hp = net::ParseHostPort(listen);
  return hp.ok() && hp->first.rfind("127.", 0) != 0 && hp->first != "::1" &&
         hp->first != "localhost";
}

core::Result<std::shared_ptr<const net::TlsContext>> ServerTls(const net::TlsFiles& tls) {
  if (tls.cert.empty() && tls.key.empty()) {
    if (!tls.ca.empty() || tls.require_client_cert) {
      return core::InvalidArgument(
          "--ca-file and --require-client-cert are for TLS: pass --tls-cert and --tls-key too");
    }
    return std::shared_ptr<const net::TlsContext>();
  }
  GLEANER_ASSIGN_OR_RETURN(std::shared_ptr<net::TlsContext> context,
                           net::TlsContext::ForServer(tls));
  return std::shared_ptr<const net::TlsContext>(std::move(context));
}

core::Result<config::GleanerConfig> LoadDaemonConfig(const std::string& path, bool must_exist,
                                                     std::optional<double> interval_s,
                                                     std::string* text) {
  // One read: the text a reload compares with is the one parsed here,
  // whatever happens to the file meanwhile.
  const core::Result<std::string> read = core::ReadPrivateFile(path);
  if (!read.ok() && read.status().code() != core::StatusCode::kNotFound) {
    return core::InvalidArgument("cannot read the config file " + path + ": " +
                                 read.status().message());
  }
  GLEANER_ASSIGN_OR_RETURN(
      config::GleanerConfig config,
      read.ok() ? config::ParseConfig(*read, path) : config::LoadConfig(path, must_exist));
  if (text != nullptr) *text = read.ok() ? *read : std::string();
  if (interval_s) {
    config.sample_interval = core::Duration(static_cast<int64_t>(*interval_s * 1e6));
    config.idle.max_sample_gap = std::max(config.idle.max_sample_gap, 3 * config.sample_interval);
  }
  return config;
}

core::Result<std::unique_ptr<store::SqliteStore>> OpenHistory(const std::string& data_dir) {
  const std::string db = data_dir + "/gleaner.db";
  std::error_code ec;
  const bool exists = std::filesystem::exists(db, ec);
  if (ec) return core::PermissionDenied("cannot look at " + db + ": " + ec.message());
  if (!exists) {
    return core::NotFound("no history at " + db +
                          ": run `gleaner up` (or `gleaner monitor`) first, or point --data-dir "
                          "at its directory");
  }
  return store::SqliteStore::Open(db);
}

core::Status CheckWatchdog(const core::ServiceNotifier& notifier, core::Duration interval) {
  const auto watchdog = notifier.watchdog();
  if (!watchdog || interval.count() * 2 <= watchdog->count()) return core::Status::Ok();
  return core::InvalidArgument(
      "[sampling] interval_s " + core::FormatDuration(interval) +
      " is longer than half the service's watchdog (" +
      core::FormatDuration(core::Duration(watchdog->count())) +
      "): the daemon pings it once a pass and would be killed; lower interval_s or raise "
      "WatchdogSec in the unit");
}

cluster::Log TimestampedLog(std::ostream& out, core::Mutex& mu) {
  // Under systemd, journald keeps the time and files each line under the
  // priority its "<N>" prefix gives.
  const int fd = &out == &std::cout ? STDOUT_FILENO : &out == &std::cerr ? STDERR_FILENO : -1;
  const bool journal = fd >= 0 && core::WritesToJournal(fd);
  return [&out, &mu, journal](const std::string& line) {
    core::MutexLock lock(mu);
    // A line may quote what users wrote (a reason, a token's name): it
    // stays one line, whatever they wrote.
    if (journal) {
      out << "<" << core::JournalPriority(line) << ">" << core::OneLine(line) << "\n";
    } else {
      out << core::Rfc3339(core::RealClock().Now()) << " " << core::OneLine(line) << "\n";
    }
    out.flush();
  };
}

StopSignal::StopSignal(std::optional<double> for_s) {
  g_stop.store(false);
  g_hangup.store(false);
  std::signal(SIGINT, RequestStop);
  std::signal(SIGTERM, RequestStop);
  std::signal(SIGHUP, RequestReload);
  if (for_s) {
    deadline_ = std::thread([seconds = *for_s] {
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
      while (!g_stop.load() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      g_stop.store(true);
    });
  }
}

StopSignal::~StopSignal() {
  g_stop.store(true);
  if (deadline_.joinable()) deadline_.join();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGHUP, SIG_DFL);
}

bool StopSignal::TakeHangup() { return g_hangup.exchange(false); }

const std::atomic<bool>& StopSignal::flag() const { return g_stop; }

}  // namespace gleaner::daemon
