#include "cli/daemon_support.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <ostream>

#include "agent/alert_webhook.h"
#include "agent/executor.h"
#include "agent/process_info.h"
#include "cli/cost_command.h"
#include "cli/exit_codes.h"
#include "cluster/agent_credentials.h"
#include "config/data_dir.h"
#include "core/format.h"
#include "core/sha256.h"
#include "cost/gpu_hour_prices.h"
#include "observe/verdict_json.h"
#include "server/socket_address.h"

namespace gleaner::cli {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void RequestStop(int) { g_stop.store(true); }

std::atomic<bool> g_hangup{false};
extern "C" void RequestReload(int) { g_hangup.store(true); }

}  // namespace

std::string Hostname() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? buf : "localhost";
}

void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

bool ListensBeyondLoopback(const std::string& listen) {
  auto hp = server::ParseHostPort(listen);
  return hp.ok() && hp->first.rfind("127.", 0) != 0 && hp->first != "::1" &&
         hp->first != "localhost";
}

void AddServerTlsOptions(CLI::App& cmd, net::TlsFiles& tls) {
  cmd.add_option("--tls-cert", tls.cert,
                 "Serve the TCP API over TLS with this PEM certificate (chain)")
      ->group("TLS");
  cmd.add_option("--tls-key", tls.key, "The PEM private key of --tls-cert")->group("TLS");
  cmd.add_option("--ca-file", tls.ca, "Check client certificates against these PEM CAs")
      ->group("TLS");
  cmd.add_flag("--require-client-cert", tls.require_client_cert,
               "Refuse clients without a certificate signed by --ca-file (mTLS)")
      ->group("TLS");
}

void AddClientTlsOptions(CLI::App& cmd, net::TlsFiles& tls, bool env) {
  CLI::Option* ca = cmd.add_option(
      "--ca-file", tls.ca, "For https:// servers: trust these PEM CAs (default: the system's)");
  CLI::Option* cert = cmd.add_option("--tls-cert", tls.cert,
                                     "For https:// servers: present this PEM client certificate");
  CLI::Option* key = cmd.add_option("--tls-key", tls.key, "The PEM private key of --tls-cert");
  for (CLI::Option* o : {ca, cert, key}) o->group("TLS");
  if (env) {
    ca->envname("GLEANER_CA_FILE");
    cert->envname("GLEANER_TLS_CERT");
    key->envname("GLEANER_TLS_KEY");
  }
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

namespace {

std::string Octal(unsigned mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", mode);
  return text;
}

// Whether `path` (canonical: the data directory, or the config file) and
// every directory above it can be changed only by root or by us, as sshd's
// StrictModes asks of a home: otherwise whoever can change one could swap
// what root opens or reads for a link to any file, or for rules of their
// own. A world-writable parent with the sticky bit (/tmp) is safe: no one
// else can rename or remove what we own in it. `what` names `path` ("the
// data directory"); `fix` says what to use instead.
core::Status CheckTrusted(const std::filesystem::path& path, const std::string& what,
                          const std::string& fix, bool sticky_itself = false) {
  const uid_t self = geteuid();
  for (std::filesystem::path p = path;; p = p.parent_path()) {
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0) {
      return core::Unavailable("cannot check " + p.string() + ": " + std::strerror(errno));
    }
    const bool itself = p == path;
    std::string problem;
    if (st.st_uid != 0 && st.st_uid != self) {
      problem = "belongs to uid " + std::to_string(st.st_uid);
    } else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
               ((itself && !sticky_itself) || !(st.st_mode & S_ISVTX))) {
      problem = "can be written by others (mode " + Octal(st.st_mode & 07777) + ")";
    }
    if (!problem.empty()) {
      return core::PermissionDenied(
          (itself ? what + " " : "a parent of " + what + ", ") + p.string() + ", " + problem +
          ": whoever can change it could make gleaner open other files, or follow other rules, "
          "in its place. Use " +
          fix + (itself ? ", or chmod go-w " + p.string() : ""));
    }
    if (p == p.root_path()) return core::Status::Ok();
  }
}

// Whether a PostgreSQL URI carries a password: user:PASSWORD@host, or a
// password= parameter.
bool HoldsPassword(const std::string& uri) {
  const size_t scheme = uri.find("://");
  if (scheme != std::string::npos) {
    const size_t at = uri.find('@', scheme + 3);
    const size_t slash = uri.find('/', scheme + 3);
    if (at != std::string::npos && (slash == std::string::npos || at < slash) &&
        uri.substr(scheme + 3, at - scheme - 3).find(':') != std::string::npos) {
      return true;
    }
  }
  return uri.find("password=") != std::string::npos;
}

core::Result<std::string> ReadPrivateFile(const std::string& path, const std::string& what) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return core::NotFound("cannot read " + what + " " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || (st.st_mode & 077) != 0) {
    close(fd);
    return core::PermissionDenied(what + " " + path + " can be read by others: chmod 600 " + path);
  }
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0 && text.size() < 65536) {
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  const auto first = text.find_first_not_of(" \t\r\n");
  const auto last = text.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

}  // namespace

core::Result<std::string> StoreUri(const std::string& flag, const std::string& file) {
  if (!flag.empty() && !file.empty()) {
    return core::InvalidArgument("give --store or --store-file, not both");
  }
  if (!flag.empty()) {
    if (HoldsPassword(flag)) {
      return core::InvalidArgument(
          "--store holds a password, which every local user can read in /proc/PID/cmdline; put "
          "the URI in a file (--store-file FILE, chmod 600), in GLEANER_STORE, or the password in "
          "libpq's ~/.pgpass (PGPASSFILE)");
    }
    return flag;
  }
  if (!file.empty()) return ReadPrivateFile(file, "the store file");
  const char* env = std::getenv("GLEANER_STORE");
  return std::string(env != nullptr ? env : "");
}

namespace {
constexpr const char* kDataDirFix =
    "a data directory that only root (or the user gleaner runs as) can change, like "
    "/var/lib/gleaner (--data-dir)";
}  // namespace

namespace {

// The data directory, resolved, when it is trusted.
core::Result<std::filesystem::path> TrustedDataDir(const std::string& data_dir) {
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::canonical(data_dir, ec);
  if (ec) {
    return core::Unavailable("cannot resolve the data directory " + data_dir + ": " + ec.message());
  }
  GLEANER_RETURN_IF_ERROR(CheckTrusted(canonical, "the data directory", kDataDirFix));
  return canonical;
}

// Job logs live in DIR/logs: a directory, not a link, trusted as DIR is.
// NotFound when it is not there yet.
core::Status CheckLogsDir(const std::filesystem::path& dir) {
  const std::filesystem::path logs = dir / "logs";
  struct stat st {};
  if (lstat(logs.c_str(), &st) != 0) return core::NotFound(logs.string() + " does not exist");
  if (!S_ISDIR(st.st_mode)) {
    return core::PermissionDenied(logs.string() + " is not a directory (a link?); remove it");
  }
  return CheckTrusted(logs, "the data directory", kDataDirFix);
}

}  // namespace

core::Status CheckDataDir(const std::string& data_dir) {
  GLEANER_ASSIGN_OR_RETURN(const std::filesystem::path dir, TrustedDataDir(data_dir));
  if (core::Status s = CheckLogsDir(dir); !s.ok() && s.code() != core::StatusCode::kNotFound) {
    return s;
  }
  // It records who submitted what, and their tokens' digests.
  const std::filesystem::path db = dir / "gleaner.db";
  struct stat st {};
  if (lstat(db.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    return core::PermissionDenied(db.string() + " can be read by others (mode " +
                                  Octal(st.st_mode & 07777) + "): chmod 600 " + db.string());
  }
  return core::Status::Ok();
}

core::Status PrepareDataDir(const std::string& data_dir) {
  std::error_code ec;
  const bool created = !std::filesystem::exists(data_dir, ec);
  std::filesystem::create_directories(data_dir, ec);
  if (!ec && created) {
    using std::filesystem::perms;
    std::filesystem::permissions(data_dir,
                                 perms::owner_all | perms::group_exec | perms::others_exec,
                                 std::filesystem::perm_options::replace, ec);
  }
  if (ec) {
    return core::Unavailable("cannot create the data directory " + data_dir + ": " + ec.message() +
                             " (choose another with --data-dir)");
  }
  // logs/ is made only inside a directory found trusted.
  GLEANER_ASSIGN_OR_RETURN(const std::filesystem::path dir, TrustedDataDir(data_dir));
  const std::filesystem::path logs = dir / "logs";
  if (mkdir(logs.c_str(), 0755) != 0 && errno != EEXIST) {
    return core::Unavailable("cannot create " + logs.string() + ": " + std::strerror(errno));
  }
  return CheckLogsDir(dir);
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

core::Status CheckOutputDirTrusted(const std::string& file) {
  std::error_code ec;
  const std::filesystem::path dir =
      std::filesystem::canonical(std::filesystem::absolute(file, ec).parent_path(), ec);
  if (ec) return core::Unavailable("cannot write " + file + ": " + ec.message());
  return CheckTrusted(dir, "the directory of " + file, "a directory only root (or you) can change",
                      /*sticky_itself=*/true);
}

core::Result<std::string> TrustedConfigPath(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(path, ec);
  if (ec == std::errc::no_such_file_or_directory) return path;  // the defaults
  if (ec) return core::Unavailable("cannot resolve the config file " + path + ": " + ec.message());
  GLEANER_RETURN_IF_ERROR(
      CheckTrusted(canonical, "the config file",
                   "a config file that only root (or the user gleaner runs as) can change, like "
                   "/etc/gleaner/gleaner.toml (--config)"));
  return canonical.string();
}

core::Result<config::GleanerConfig> LoadDaemonConfig(const std::string& path, bool must_exist,
                                             std::optional<double> interval_s) {
  GLEANER_ASSIGN_OR_RETURN(config::GleanerConfig config, config::LoadConfig(path, must_exist));
  if (interval_s) {
    config.sample_interval = core::Duration(static_cast<int64_t>(*interval_s * 1e6));
    config.idle.max_sample_gap = std::max(config.idle.max_sample_gap, 3 * config.sample_interval);
  }
  return config;
}

std::optional<DaemonBase> StartDaemon(const std::string& data_dir_flag,
                                      const std::string& config_flag,
                                      std::optional<double> interval_s, std::ostream& err,
                                      int* exit_code) {
  RaiseFileLimit();
  DaemonBase base;
  // First, while the daemon has one thread: it takes the variables out of
  // the environment.
  base.notifier = core::ServiceNotifier::FromEnvironment();
  base.data_dir = config::DataDir(data_dir_flag);
  base.config_path = config::ConfigPath(base.data_dir, config_flag);
  // Its rules say who may do what as root: only those who could be root
  // anyway may write them. Read from where it was checked, never again
  // through a link.
  auto trusted = TrustedConfigPath(base.config_path);
  if (!trusted.ok()) {
    err << "gleaner: " << trusted.status().message() << "\n";
    *exit_code = kExitFailure;
    return std::nullopt;
  }
  base.config_path = std::move(trusted).value();
  auto config = LoadDaemonConfig(base.config_path, !config_flag.empty(), interval_s);
  if (!config.ok()) {
    err << "gleaner: " << config.status().message() << "\n";
    *exit_code = kExitBadInput;
    return std::nullopt;
  }
  base.config = std::move(config).value();
  if (auto s = PrepareDataDir(base.data_dir); !s.ok()) {
    err << "gleaner: " << s.message() << "\n";
    *exit_code = kExitFailure;
    return std::nullopt;
  }
  return base;
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

cluster::Log TimestampedLog(std::ostream& out, std::mutex& mu) {
  // Under systemd, journald keeps the time and files each line under the
  // priority its "<N>" prefix gives.
  const int fd = &out == &std::cout ? STDOUT_FILENO : &out == &std::cerr ? STDERR_FILENO : -1;
  const bool journal = fd >= 0 && core::WritesToJournal(fd);
  return [&out, &mu, journal](const std::string& line) {
    std::lock_guard lock(mu);
    // A line may quote what users wrote (a reason, a token's name): it
    // stays one line, whatever they wrote.
    if (journal) {
      out << "<" << core::JournalPriority(line) << ">" << core::OneLine(line) << "\n";
    } else {
      out << observe::Rfc3339(core::RealClock().Now()) << " " << core::OneLine(line) << "\n";
    }
    out.flush();
  };
}

namespace {

// Where approvals asked for and given are told: the log, and the alert
// webhook where there is one.
server::NotifyApproval ApprovalNotifier(const std::string& webhook_url, const cluster::Log& log) {
  std::shared_ptr<agent::AlertWebhook> webhook;
  if (!webhook_url.empty()) {
    webhook = std::make_shared<agent::AlertWebhook>(
        agent::AlertWebhook::Options{webhook_url, Hostname()}, log);
  }
  return [webhook, log](const server::ApprovalNotice& n) {
    log(n.summary);
    if (!webhook) return;
    // Asked for, an approval fires; decided, it is resolved, saying how.
    observe::AlertEvent e;
    e.rule = "approval_requested";
    e.job = std::to_string(n.job);
    e.firing = n.kind == "approval_requested";
    e.starts_at = e.ends_at = core::RealClock().Now();
    e.severity = "info";
    e.summary = n.summary;
    e.users = n.users;
    webhook->Send({e});
  };
}

}  // namespace

core::Result<server::ApiOptions> DaemonApiOptions(const std::string& data_dir,
                                                  const std::string& config_path,
                                                  const config::GleanerConfig& config,
                                                  store::ObservationStore* observations,
                                                  const cluster::Log& log) {
  server::ApiOptions options;
  options.log_dir = data_dir + "/logs";
  options.user_name = agent::UserName;
  options.uid_of = agent::UserId;
  options.observations = observations;
  auto catalog = LoadCatalog(config.cost.catalog_files);
  if (!catalog.ok()) {
    return core::InvalidArgument(catalog.status().message() + " ([cost] catalogs in " +
                                 config_path + ")");
  }
  options.cost.catalog = std::move(catalog).value();
  options.cost.settings = config.cost;
  options.cost.project_of_user = config.project_of_user;
  options.anonymous_read = config.ui_anonymous_read;
  options.hide_others_commands = config.ui_hide_others_commands.value_or(config.ui_anonymous_read);
  options.tokens = config.tokens;
  options.submit_limits = config.submit_limits;
  options.submit_policy = std::make_shared<const server::SubmitPolicy>(
      server::ProjectMembership(config.projects, config.project_of_user), config.class_rules,
      config.sessions);
  options.notify_approval = ApprovalNotifier(config.alert_webhook_url, log);
  return options;
}

namespace {

// A secret kept in a file: readable by its owner only, surrounding blanks
// dropped.
core::Result<std::string> ReadSecretFile(const std::string& path, const std::string& what) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) return core::NotFound("cannot read the " + what + " " + path + ": " + ec.message());
  using std::filesystem::perms;
  if ((status.permissions() & (perms::group_read | perms::others_read)) != perms::none) {
    return core::PermissionDenied("the " + what + " " + path +
                                  " is readable by others: chmod 600 " + path);
  }
  std::ifstream in(path);
  std::string secret((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto first = secret.find_first_not_of(" \t\r\n");
  const auto last = secret.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? "" : secret.substr(first, last - first + 1);
}

}  // namespace

core::Result<std::string> ReadJoinSecret(const std::string& path) {
  if (path.empty()) {
    return core::InvalidArgument(
        "--join-secret-file is required: a file holding the cluster's secret, for the "
        "coordinators only (make one with `openssl rand -hex 32 > join.secret && chmod 600 "
        "join.secret`)");
  }
  GLEANER_ASSIGN_OR_RETURN(std::string secret, ReadSecretFile(path, "cluster secret"));
  if (auto s = cluster::CheckJoinSecret(secret); !s.ok()) {
    return core::InvalidArgument(path + ": " + s.message());
  }
  return secret;
}

core::Result<std::string> ReadJoinToken(const std::string& path) {
  GLEANER_ASSIGN_OR_RETURN(std::string token, ReadSecretFile(path, "join token"));
  if (!token.starts_with("gjt_")) {
    return core::InvalidArgument(path +
                                 ": not a join token (they start with gjt_; `gleaner "
                                 "agent-token create` on a coordinator host makes one)");
  }
  return token;
}

std::unique_ptr<gpu::CudaCheckpoint> OpenCudaForParking(const observe::ParkingConfig& parking,
                                                        const std::string& cuda_library,
                                                        const std::string& state_path,
                                                        const cluster::Log& log) {
  std::error_code ec;
  const bool parked_before = std::filesystem::exists(state_path, ec);
  if (!parking.enabled && !parked_before) return nullptr;
  auto cuda = gpu::CudaCheckpoint::Open(cuda_library);
  if (!cuda.ok()) {
    log("warning: " + cuda.status().message() +
        (parking.enabled ? "; no holder is parked ([parking] in gleaner.toml)"
                         : "; holders parked before cannot be restored by gleaner"));
    return nullptr;
  }
  if (parking.enabled) {
    log("parking holders held idle for " + core::FormatDuration(parking.park_idle_timeout) +
        ", after " + core::FormatDuration(parking.notice) + " of notice (CUDA driver " +
        std::to_string((*cuda)->driver_version() / 1000) + "." +
        std::to_string((*cuda)->driver_version() % 1000 / 10) + ")");
  }
  return std::move(cuda).value();
}

std::optional<agent::JobCgroups> UseJobCgroups(const std::string& data_dir,
                                               agent::Executor& executor, const cluster::Log& log) {
  const std::string leaf =
      "gleaner-jobs-" +
      core::Sha256Hex(std::filesystem::absolute(data_dir).lexically_normal().string())
          .substr(0, 12);
  auto cgroups = agent::JobCgroups::Open(leaf);
  if (!cgroups.ok()) {
    log("jobs run without cgroups of their own (" + cgroups.status().message() +
        "); their process groups hold them");
    return std::nullopt;
  }
  log("each job gets a cgroup of its own under " + cgroups->base());
  cgroups->EnableLimits();
  log("a job's --cpus and --mem are held by " + cgroups->limits().Describe());
  if (const int swept = cgroups->SweepStaleBases(); swept > 0) {
    log("removed " + std::to_string(swept) +
        " empty job cgroup(s) that stopped gleaners left beside it");
  }
  executor.UseCgroups(*cgroups);
  return std::move(cgroups).value();
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

// What an owned GPU-hour of each of the host's GPU models costs, for the
// idle-cost gauge; models that cannot be priced are left out.
agent::IdleCostPrices IdleCostPricesOf(const std::vector<gpu::GpuSnapshot>& gpus,
                                       const cost::Catalog& catalog,
                                       const cost::CostSettings& site) {
  agent::IdleCostPrices prices;
  prices.currency = std::string(cost::CurrencyName(site.currency));
  for (const gpu::GpuSnapshot& g : gpus) {
    if (!g.name.has_value() || prices.owned_per_gpu_hour.count(g.name.value())) continue;
    const std::optional<uint64_t> memory =
        g.memory_total.has_value() ? std::optional<uint64_t>(g.memory_total.value().count())
                                   : std::nullopt;
    const std::string model = site.ModelOf(g.name.value(), memory);
    const cost::GpuHourPrices p =
        cost::PriceGpuHours(model, catalog, site.OnPremFor(model), site.currency, site.rates);
    if (p.owned_per_gpu_hour) prices.owned_per_gpu_hour[g.name.value()] = *p.owned_per_gpu_hour;
  }
  return prices;
}

void ResumeFromHistory(agent::Sampler& sampler, const cluster::Log& log) {
  auto resumed = sampler.ResumeFromStore();
  if (!resumed.ok()) {
    log("cannot resume from the stored history (" + resumed.status().message() +
        "); GPUs are watched afresh");
    return;
  }
  if (resumed->gpus > 0) {
    log("resumed " + std::to_string(resumed->gpus) + " GPU(s) from up to " +
        core::FormatDuration(resumed->longest) +
        " of stored minutes, so verdicts go on from that history");
  }
  if (resumed->pause_model) log("restored what was learned about pauses");
}

}  // namespace gleaner::cli
