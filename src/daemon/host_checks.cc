#include "daemon/host_checks.h"

#include <cmath>
#include <filesystem>
#include <vector>

#include "agent/job_cgroups.h"
#include "config/config_file.h"
#include "config/data_dir.h"
#include "config/trusted_paths.h"
#include "core/enum_names.h"
#include "daemon/daemon_start.h"
#include "daemon/secrets.h"
#include "gpu/nvml/nvml_backend.h"
#include "net/http_client.h"
#include "net/socket_address.h"
#include "server/http_server.h"
#include "store/open_store.h"

namespace gleaner::daemon {
namespace {

// The NVML entry points without which a part of gleaner goes blind.
std::vector<std::string> MissingEntryPoints(const gpu::nvml::NvmlLibrary& lib) {
  std::vector<std::string> missing;
  const auto need = [&](bool present, const char* what) {
    if (!present) missing.emplace_back(what);
  };
  need(lib.utilization != nullptr, "nvmlDeviceGetUtilizationRates (idle verdicts)");
  need(lib.compute_processes.fn != nullptr, "nvmlDeviceGetComputeRunningProcesses (holders)");
  need(lib.process_utilization != nullptr,
       "nvmlDeviceGetProcessUtilization (lending beside holders)");
  need(lib.event_set_create != nullptr, "nvmlEventSetCreate (Xid events)");
  need(lib.total_ecc_errors != nullptr, "nvmlDeviceGetTotalEccErrors (ECC health)");
  return missing;
}

void CheckDriver(const HostCheckSetup& o, std::vector<HostCheck>& checks) {
  if (!o.fake.empty()) {
    checks.push_back({"driver", CheckLevel::kSkipped, "simulated GPUs (--fake " + o.fake + ")"});
    return;
  }
  auto backend = gpu::NvmlBackend::Create(o.nvml_library);
  if (!backend.ok()) {
    checks.push_back({"driver", CheckLevel::kFail, backend.status().message()});
    return;
  }
  const gpu::DriverInfo& d = (*backend)->Driver();
  auto snapshots = (*backend)->Snapshot();
  std::string detail = "NVIDIA driver " + d.driver_version.value_or("?") + ", NVML " +
                       d.nvml_version.value_or("?") + ", " +
                       std::to_string(snapshots.ok() ? snapshots->size() : 0) + " GPU(s)";
  const std::vector<std::string> missing = MissingEntryPoints((*backend)->library());
  for (const std::string& m : missing) detail += "; lacks " + m;
  if (!missing.empty()) detail += ": upgrade the driver";
  checks.push_back({"driver", missing.empty() ? CheckLevel::kOk : CheckLevel::kWarn, detail});
  if (!snapshots.ok()) {
    checks.push_back({"gpus", CheckLevel::kFail, snapshots.status().message()});
    return;
  }
  std::string sick;
  for (const gpu::GpuSnapshot& s : *snapshots) {
    if (s.health == gpu::GpuHealth::kOk) continue;
    sick += (sick.empty() ? "" : "; ") + std::string("GPU ") + std::to_string(s.index) + " " +
            std::string(gpu::GpuHealthName(s.health)) + ": " + s.health_detail;
  }
  checks.push_back({"gpus", sick.empty() ? CheckLevel::kOk : CheckLevel::kWarn,
                    sick.empty() ? "every GPU healthy" : sick + " (never lent)"});
}

void CheckCgroups(std::vector<HostCheck>& checks) {
  auto cgroups = agent::JobCgroups::Open("gleaner-doctor-" + std::to_string(getpid()));
  if (!cgroups.ok()) {
    checks.push_back({"cgroups", CheckLevel::kWarn,
                      cgroups.status().message() +
                          "; jobs fall back to process groups, which a job that daemonises "
                          "leaves (run gleaner as a systemd service with Delegate=yes: "
                          "docs/systemd.md)"});
    return;
  }
  checks.push_back(
      {"cgroups", CheckLevel::kOk, "each job gets a cgroup v2 under " + cgroups->base()});
  // Looked at, not turned on: the daemon enables them in its own cgroup.
  const agent::CgroupLimits limits = agent::CgroupLimits::Find(cgroups->base(), false);
  checks.push_back({"limits", limits.cpu() && limits.memory() ? CheckLevel::kOk : CheckLevel::kWarn,
                    "a job's --cpus and --mem are held by " + limits.Describe()});
  cgroups->RemoveBase().IgnoreError();
}

void CheckDataAndConfig(const HostCheckSetup& o, std::vector<HostCheck>& checks) {
  const std::string data_dir = config::DataDir(o.data_dir);
  std::error_code ec;
  const core::Result<bool> reachable = config::InDataDir(data_dir + "/gleaner.sock");
  if (!std::filesystem::exists(data_dir, ec)) {
    checks.push_back(
        {"data-dir", CheckLevel::kWarn, data_dir + " does not exist yet: gleaner up creates it"});
  } else if (!reachable.ok()) {
    checks.push_back({"data-dir", CheckLevel::kFail, reachable.status().message()});
  } else if (core::Status s = config::CheckDataDir(data_dir); !s.ok()) {
    checks.push_back({"data-dir", CheckLevel::kFail, s.message()});
  } else {
    checks.push_back({"data-dir", CheckLevel::kOk, data_dir});
  }
  const std::string path = config::ConfigPath(data_dir, o.config);
  if (o.config.empty() && !std::filesystem::exists(path, ec)) {
    checks.push_back({"config", CheckLevel::kOk, "no " + path + ": the defaults hold"});
    return;
  }
  auto trusted = config::TrustedConfigPath(path);
  if (!trusted.ok()) {
    checks.push_back({"config", CheckLevel::kFail, trusted.status().message()});
    return;
  }
  auto config = LoadDaemonConfig(*trusted, !o.config.empty(), std::nullopt);
  checks.push_back(config.ok() ? HostCheck{"config", CheckLevel::kOk, *trusted + " reads well"}
                               : HostCheck{"config", CheckLevel::kFail, config.status().message()});
}

// Free, or served by the gleaner of this data directory already.
void CheckListen(const HostCheckSetup& o, std::vector<HostCheck>& checks) {
  if (o.listen == "none") {
    checks.push_back({"listen", CheckLevel::kSkipped, "no TCP API (--listen none)"});
    return;
  }
  auto host_port = net::ParseHostPort(o.listen);
  if (!host_port.ok()) {
    checks.push_back({"listen", CheckLevel::kFail, host_port.status().message()});
    return;
  }
  auto probe = server::HttpServer::ServeTcp(
      host_port->first, host_port->second,
      [](const server::HttpRequest&, const server::Peer&) { return server::HttpResponse{}; });
  if (probe.ok()) {
    checks.push_back({"listen", CheckLevel::kOk, o.listen + " is free for the API"});
    return;
  }
  net::Endpoint own;
  own.unix_path = config::DataDir(o.data_dir) + "/gleaner.sock";
  if (net::HttpCall(own, "GET", "/metrics", "", "").ok()) {
    checks.push_back({"listen", CheckLevel::kWarn,
                      o.listen + " is taken; a gleaner runs on " + own.unix_path +
                          ": if it listens there, all is well"});
    return;
  }
  checks.push_back({"listen", CheckLevel::kFail,
                    probe.status().message() +
                        ": another program holds it; stop it or give gleaner up another --listen"});
}

// Reached and read without a change: opening the store would migrate its
// schema ahead of servers still running the old release.
HostCheck StoreCheck(const std::string& uri) {
  auto probe = store::ProbeStore(uri);
  if (!probe.ok() && probe.status().code() == core::StatusCode::kNotFound) {
    return {"store", CheckLevel::kOk, probe.status().message()};
  }
  if (!probe.ok()) return {"store", CheckLevel::kFail, probe.status().message()};
  const std::string where = store::IsPostgresUri(uri) ? "PostgreSQL" : uri;
  const std::string version = "schema version " + std::to_string(probe->schema_version);
  if (probe->schema_version > probe->latest_version) {
    return {"store", CheckLevel::kFail,
            where + " has " + version + ", newer than this gleaner's (" +
                std::to_string(probe->latest_version) + "): upgrade gleaner on this host"};
  }
  std::string detail = where + " reached, " + version;
  CheckLevel level = CheckLevel::kOk;
  if (probe->schema_version < probe->latest_version) {
    detail += "; the first start of this gleaner upgrades it to " +
              std::to_string(probe->latest_version) + " (upgrade every server sharing it together)";
  }
  if (probe->clock_offset) {
    const double off_s = std::chrono::duration<double>(*probe->clock_offset).count();
    char said[96];
    std::snprintf(said, sizeof said, "; its clock is %.1f s %s this host's", std::abs(off_s),
                  off_s > 0 ? "ahead of" : "behind");
    detail += said;
    if (std::abs(off_s) > 2) {
      level = CheckLevel::kWarn;
      detail += ": keep both in sync (timedatectl set-ntp true, or chrony)";
    }
  }
  return {"store", level, detail};
}

void CheckStoreAndTls(const HostCheckSetup& o, std::vector<HostCheck>& checks) {
  if (o.store.empty() && o.store_file.empty()) {
    checks.push_back(
        {"store", CheckLevel::kSkipped, "no --store: gleaner up keeps DATA_DIR/gleaner.db"});
  } else if (auto uri = StoreUri(o.store, o.store_file); !uri.ok()) {
    checks.push_back({"store", CheckLevel::kFail, uri.status().message()});
  } else {
    checks.push_back(StoreCheck(*uri));
  }
  if (o.tls.cert.empty() && o.tls.key.empty()) {
    checks.push_back({"tls", CheckLevel::kSkipped, "no --tls-cert"});
  } else if (auto context = ServerTls(o.tls); !context.ok()) {
    checks.push_back({"tls", CheckLevel::kFail, context.status().message()});
  } else {
    checks.push_back({"tls", CheckLevel::kOk, o.tls.cert + " and its key load and match"});
  }
}

// Leases, job times and the cluster's "last heard" all compare timestamps
// taken on different hosts.
void CheckClock(const HostCheckSetup& o, std::vector<HostCheck>& checks) {
  if (o.server.empty()) {
    checks.push_back({"clock", CheckLevel::kSkipped,
                      "no --server: give a coordinator's URL (gleaner --server URL doctor) to "
                      "compare clocks with it"});
    return;
  }
  auto endpoint = net::ParseServerUrl(o.server);
  core::Status tls =
      endpoint.ok() ? net::UseClientTls(o.server_tls, &*endpoint) : endpoint.status();
  if (!tls.ok()) {
    checks.push_back({"clock", CheckLevel::kFail, tls.message()});
    return;
  }
  net::HttpClient client(*endpoint);
  const core::RealClock clock;
  const core::TimePoint sent = clock.Now();
  // Any answer carries the server's Date, a refusal for want of a token too.
  auto answer = client.Call("GET", "/metrics", "", "", core::Seconds(10));
  const core::TimePoint heard = clock.Now();
  if (!answer.ok()) {
    checks.push_back({"clock", CheckLevel::kFail, answer.status().message()});
    return;
  }
  if (!client.server_date()) {
    checks.push_back({"clock", CheckLevel::kWarn, o.server + " sent no Date: is it a gleaner?"});
    return;
  }
  // The Date has whole seconds, taken between sending and hearing.
  const core::Duration round_trip = heard - sent;
  const core::Duration offset =
      *client.server_date() + core::Seconds(1) / 2 - (sent + round_trip / 2);
  const double off_s = std::chrono::duration<double>(offset).count();
  char said[160];
  std::snprintf(said, sizeof said, "%s's clock is %.1f s %s this host's", o.server.c_str(),
                std::abs(off_s), off_s > 0 ? "ahead of" : "behind");
  const double abs_s = std::abs(off_s);
  if (abs_s <= 2 + std::chrono::duration<double>(round_trip).count()) {
    checks.push_back({"clock", CheckLevel::kOk, std::string(said) + " (within a second or two)"});
    return;
  }
  checks.push_back({"clock", abs_s > 30 ? CheckLevel::kFail : CheckLevel::kWarn,
                    std::string(said) +
                        ": agents' reports and leases compare times across hosts; keep both "
                        "in sync (timedatectl set-ntp true, or chrony)"});
}

}  // namespace

constexpr auto kCheckLevelNames = core::MakeEnumNames<CheckLevel>(
    {
        {CheckLevel::kOk, "ok"},
        {CheckLevel::kWarn, "warn"},
        {CheckLevel::kFail, "FAIL"},
        {CheckLevel::kSkipped, "skip"},
    },
    "FAIL");

std::string_view CheckLevelName(CheckLevel level) { return kCheckLevelNames.Name(level); }

std::vector<HostCheck> CheckHost(const HostCheckSetup& setup) {
  std::vector<HostCheck> checks;
  CheckDriver(setup, checks);
  CheckCgroups(checks);
  CheckDataAndConfig(setup, checks);
  CheckListen(setup, checks);
  CheckStoreAndTls(setup, checks);
  CheckClock(setup, checks);
  return checks;
}

}  // namespace gleaner::daemon
