#pragma once

#include <atomic>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "agent/executor.h"
#include "agent/host_metrics.h"
#include "agent/job_cgroups.h"
#include "agent/sampler.h"
#include "config/config_file.h"
#include "cluster/log.h"
#include "core/result.h"
#include "core/service_notify.h"
#include "gpu/cuda/cuda_checkpoint.h"
#include "net/tls.h"
#include "server/api.h"
#include "store/sqlite_store.h"

namespace CLI {
class App;
}

// What the long-running commands (`gleaner up`, `server`, `agent`) share.
namespace gleaner::cli {

std::string Hostname();

// Jobs' logs, the API's connections and /proc all need descriptors; the
// soft limit (often 1024) is raised to the hard one, so a burst of
// clients cannot starve the daemon's loop.
void RaiseFileLimit();

// Whether an API on `listen` (HOST:PORT) is reachable from other hosts.
bool ListensBeyondLoopback(const std::string& listen);

// A daemon's TCP API over TLS: --tls-cert, --tls-key, and --ca-file with
// --require-client-cert for client certificates (mTLS).
void AddServerTlsOptions(CLI::App& cmd, net::TlsFiles& tls);
// A client's: --ca-file (whom to trust) and --tls-cert, --tls-key (a
// certificate to present). `env`: also read from $GLEANER_CA_FILE,
// $GLEANER_TLS_CERT and $GLEANER_TLS_KEY.
void AddClientTlsOptions(CLI::App& cmd, net::TlsFiles& tls, bool env);
// The server context the options name; null when no --tls-cert was given
// (and none of the others either: alone they are refused).
core::Result<std::shared_ptr<const net::TlsContext>> ServerTls(const net::TlsFiles& tls);

// The store a server uses: `flag` (--store), else the contents of `file`
// (--store-file), else $GLEANER_STORE; "" for the default. A password in
// `flag` is refused: every local user can read a process's arguments. A
// file readable by others is refused too.
core::Result<std::string> StoreUri(const std::string& flag, const std::string& file);

// Creates the data directory and its logs/: others may reach a socket
// inside (x) but not list it. Refuses (PermissionDenied, saying how to fix
// it) a data directory, or any directory above it, that anyone but root or
// gleaner's own user could change, since root opens files inside.
core::Status PrepareDataDir(const std::string& data_dir);
// The same checks on a data directory that exists, changing nothing
// (gleaner doctor).
core::Status CheckDataDir(const std::string& data_dir);

// The store `gleaner up` (or `monitor`) keeps in `data_dir`, opened for a
// command that reads its history; NotFound (saying what to run) where
// there is none, and a clear error where it cannot be looked at.
core::Result<std::unique_ptr<store::SqliteStore>> OpenHistory(const std::string& data_dir);

// Refuses (PermissionDenied, saying how to fix it) to write `file` in a
// directory that anyone but root or us could change (a sticky one, like
// /tmp, is fine): a report written there as root could be sent over any
// file by whoever swaps the directory.
core::Status CheckOutputDirTrusted(const std::string& file);

// The config file at `path` resolved (links followed once, here), to be
// read from there on; `path` itself where there is none (the defaults).
// Refuses (PermissionDenied, saying how to fix it) a file that anyone but
// root or gleaner's own user could change, directly or through a directory
// above it: its rules say who may do what as root.
core::Result<std::string> TrustedConfigPath(const std::string& path);

// The config at `path` (`must_exist`: named by --config), with
// `--interval` laid over it (and the gap that still counts as one sample
// widened to three intervals).
core::Result<config::GleanerConfig> LoadDaemonConfig(const std::string& path, bool must_exist,
                                             std::optional<double> interval_s);

// What every daemon starts from: its data directory and its config.
struct DaemonBase {
  std::string data_dir;
  std::string config_path;
  config::GleanerConfig config;
  // systemd's Type=notify: ready, watchdog pings, stopping.
  core::ServiceNotifier notifier;
};

// The one start-up path of `up`, `monitor`, `agent` and `server`: raises
// the file limit, reads the config (`interval_s` laid over it) and prepares
// the data directory. On failure it says why on `err` and returns nullopt
// with `*exit_code` set: kExitBadInput for the config, kExitFailure for the
// directory.
std::optional<DaemonBase> StartDaemon(const std::string& data_dir_flag,
                                      const std::string& config_flag,
                                      std::optional<double> interval_s, std::ostream& err,
                                      int* exit_code);

// A daemon that pings systemd's watchdog once a sampling pass must pass
// at least twice a watchdog interval; refused (saying what to change) when
// `interval` is longer than half of it.
core::Status CheckWatchdog(const core::ServiceNotifier& notifier, core::Duration interval);

// A log line at a time to `out`, each with its UTC time; `mu` serialises
// writers on several threads.
cluster::Log TimestampedLog(std::ostream& out, std::mutex& mu);

// What every API a daemon serves shares: jobs run as local users, their logs
// in DATA_DIR/logs, history and prices from `observations` and the config's
// [cost], [ui] anonymous_read. The catalog's error names the config file.
// `log` hears of approvals asked for and given, which also go to the alert
// webhook where one is configured.
core::Result<server::ApiOptions> DaemonApiOptions(const std::string& data_dir,
                                                  const std::string& config_path,
                                                  const config::GleanerConfig& config,
                                                  store::ObservationStore* observations,
                                                  const cluster::Log& log);

// What an owned GPU-hour of each of the host's GPU models costs, for the
// idle-cost gauge; models that cannot be priced are left out.
agent::IdleCostPrices IdleCostPricesOf(const std::vector<gpu::GpuSnapshot>& gpus,
                                       const cost::Catalog& catalog,
                                       const cost::CostSettings& site);

// The cluster's secret (coordinators only) from `path`, trimmed of
// surrounding white space, checked for length; a file others may read is
// refused.
core::Result<std::string> ReadJoinSecret(const std::string& path);

// An agent's one-time join token from `path`, likewise.
core::Result<std::string> ReadJoinToken(const std::string& path);

// Gives each job a cgroup of its own where cgroup v2 allows, one directory
// per data directory (several gleaners on a host never sweep each other's
// jobs); says which it is. The returned cgroups' base is removed on exit.
std::optional<agent::JobCgroups> UseJobCgroups(const std::string& data_dir,
                                               agent::Executor& executor, const cluster::Log& log);

// The CUDA driver's checkpoint API for parking holders, where [parking] is
// enabled or `state_path` records holders parked before a restart (they
// must come back whatever the config says now); null, saying why, where
// it is not wanted or cannot be opened.
std::unique_ptr<gpu::CudaCheckpoint> OpenCudaForParking(const observe::ParkingConfig& parking,
                                                        const std::string& cuda_library,
                                                        const std::string& state_path,
                                                        const cluster::Log& log);

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

// Resumes the sampler's verdicts and pause model from the store
// (Sampler::ResumeFromStore) and says what it resumed, or why not.
void ResumeFromHistory(agent::Sampler& sampler, const cluster::Log& log);

}  // namespace gleaner::cli
