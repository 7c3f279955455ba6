#include "cli/daemon_support.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "agent/process_info.h"
#include "cli/cost_command.h"
#include "cluster/agent_credentials.h"
#include "core/sha256.h"
#include "observe/verdict_json.h"
#include "server/socket_address.h"

namespace gleaner::cli {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void RequestStop(int) { g_stop.store(true); }

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

core::Status PrepareDataDir(const std::string& data_dir) {
  std::error_code ec;
  const bool created = !std::filesystem::exists(data_dir);
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
  return core::Status::Ok();
}

core::Result<GleanerConfig> LoadDaemonConfig(const std::string& path, bool must_exist,
                                             std::optional<double> interval_s) {
  GLEANER_ASSIGN_OR_RETURN(GleanerConfig config, LoadConfig(path, must_exist));
  if (interval_s) {
    config.sample_interval = core::Duration(static_cast<int64_t>(*interval_s * 1e6));
    config.idle.max_sample_gap = std::max(config.idle.max_sample_gap, 3 * config.sample_interval);
  }
  return config;
}

void CreatePrivateFile(const std::string& path) {
  if (const int fd = open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600); fd >= 0) close(fd);
}

cluster::Log TimestampedLog(std::ostream& out, std::mutex& mu) {
  return [&out, &mu](const std::string& line) {
    std::lock_guard lock(mu);
    out << observe::Rfc3339(core::RealClock().Now()) << " " << line << "\n";
    out.flush();
  };
}

core::Result<server::ApiOptions> DaemonApiOptions(const std::string& data_dir,
                                                  const std::string& config_path,
                                                  const GleanerConfig& config,
                                                  store::ObservationStore* observations) {
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
  return options;
}

core::Result<std::string> ReadJoinSecret(const std::string& path) {
  if (path.empty()) {
    return core::InvalidArgument(
        "--join-secret-file is required: a file holding the cluster's join secret (make one "
        "with `openssl rand -hex 32 > join.secret && chmod 600 join.secret`)");
  }
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) return core::NotFound("cannot read the join secret " + path + ": " + ec.message());
  using std::filesystem::perms;
  if ((status.permissions() & (perms::group_read | perms::others_read)) != perms::none) {
    return core::PermissionDenied("the join secret " + path + " is readable by others: chmod 600 " +
                                  path);
  }
  std::ifstream in(path);
  std::string secret((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto first = secret.find_first_not_of(" \t\r\n");
  const auto last = secret.find_last_not_of(" \t\r\n");
  secret = first == std::string::npos ? "" : secret.substr(first, last - first + 1);
  if (auto s = cluster::CheckJoinSecret(secret); !s.ok()) {
    return core::InvalidArgument(path + ": " + s.message());
  }
  return secret;
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
  executor.UseCgroups(*cgroups);
  return std::move(cgroups).value();
}

StopSignal::StopSignal(std::optional<double> for_s) {
  g_stop.store(false);
  std::signal(SIGINT, RequestStop);
  std::signal(SIGTERM, RequestStop);
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
}

const std::atomic<bool>& StopSignal::flag() const { return g_stop; }

}  // namespace gleaner::cli
