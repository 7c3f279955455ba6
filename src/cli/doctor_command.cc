#include "cli/doctor_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "agent/job_cgroups.h"
#include "cli/api_client.h"
#include "cli/daemon_support.h"
#include "cli/exit_codes.h"
#include "config/config_file.h"
#include "config/data_dir.h"
#include "config/trusted_paths.h"
#include "daemon/daemon_start.h"
#include "daemon/secrets.h"
#include "gpu/nvml/nvml_backend.h"
#include "server/http_client.h"
#include "server/http_server.h"
#include "server/socket_address.h"
#include "store/open_store.h"

namespace gleaner::cli {
namespace {

enum class Level { kOk, kWarn, kFail, kSkipped };

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kOk:
      return "ok";
    case Level::kWarn:
      return "warn";
    case Level::kFail:
      return "FAIL";
    case Level::kSkipped:
      return "skip";
  }
  return "FAIL";
}

struct Check {
  std::string name;
  Level level;
  std::string detail;  // what was found, and for a problem how to fix it
};

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

void CheckDriver(const DoctorOptions& o, std::vector<Check>& checks) {
  if (!o.fake.empty()) {
    checks.push_back({"driver", Level::kSkipped, "simulated GPUs (--fake " + o.fake + ")"});
    return;
  }
  auto backend = gpu::NvmlBackend::Create(o.nvml_library);
  if (!backend.ok()) {
    checks.push_back({"driver", Level::kFail, backend.status().message()});
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
  checks.push_back({"driver", missing.empty() ? Level::kOk : Level::kWarn, detail});
  if (!snapshots.ok()) {
    checks.push_back({"gpus", Level::kFail, snapshots.status().message()});
    return;
  }
  std::string sick;
  for (const gpu::GpuSnapshot& s : *snapshots) {
    if (s.health == gpu::GpuHealth::kOk) continue;
    sick += (sick.empty() ? "" : "; ") + std::string("GPU ") + std::to_string(s.index) + " " +
            std::string(gpu::GpuHealthName(s.health)) + ": " + s.health_detail;
  }
  checks.push_back({"gpus", sick.empty() ? Level::kOk : Level::kWarn,
                    sick.empty() ? "every GPU healthy" : sick + " (never lent)"});
}

void CheckCgroups(std::vector<Check>& checks) {
  auto cgroups = agent::JobCgroups::Open("gleaner-doctor-" + std::to_string(getpid()));
  if (!cgroups.ok()) {
    checks.push_back({"cgroups", Level::kWarn,
                      cgroups.status().message() +
                          "; jobs fall back to process groups, which a job that daemonises "
                          "leaves (run gleaner as a systemd service with Delegate=yes: "
                          "docs/systemd.md)"});
    return;
  }
  checks.push_back({"cgroups", Level::kOk, "each job gets a cgroup v2 under " + cgroups->base()});
  // Looked at, not turned on: the daemon enables them in its own cgroup.
  const agent::CgroupLimits limits = agent::CgroupLimits::Find(cgroups->base(), false);
  checks.push_back({"limits", limits.cpu() && limits.memory() ? Level::kOk : Level::kWarn,
                    "a job's --cpus and --mem are held by " + limits.Describe()});
  cgroups->RemoveBase().IgnoreError();
}

void CheckDataAndConfig(const DoctorOptions& o, std::vector<Check>& checks) {
  const std::string data_dir = config::DataDir(o.data_dir);
  std::error_code ec;
  const core::Result<bool> reachable = config::InDataDir(data_dir + "/gleaner.sock");
  if (!std::filesystem::exists(data_dir, ec)) {
    checks.push_back(
        {"data-dir", Level::kWarn, data_dir + " does not exist yet: gleaner up creates it"});
  } else if (!reachable.ok()) {
    checks.push_back({"data-dir", Level::kFail, reachable.status().message()});
  } else if (core::Status s = config::CheckDataDir(data_dir); !s.ok()) {
    checks.push_back({"data-dir", Level::kFail, s.message()});
  } else {
    checks.push_back({"data-dir", Level::kOk, data_dir});
  }
  const std::string path = config::ConfigPath(data_dir, o.config);
  if (o.config.empty() && !std::filesystem::exists(path, ec)) {
    checks.push_back({"config", Level::kOk, "no " + path + ": the defaults hold"});
    return;
  }
  auto trusted = config::TrustedConfigPath(path);
  if (!trusted.ok()) {
    checks.push_back({"config", Level::kFail, trusted.status().message()});
    return;
  }
  auto config = daemon::LoadDaemonConfig(*trusted, !o.config.empty(), std::nullopt);
  checks.push_back(config.ok() ? Check{"config", Level::kOk, *trusted + " reads well"}
                               : Check{"config", Level::kFail, config.status().message()});
}

// Free, or served by the gleaner of this data directory already.
void CheckListen(const DoctorOptions& o, std::vector<Check>& checks) {
  if (o.listen == "none") {
    checks.push_back({"listen", Level::kSkipped, "no TCP API (--listen none)"});
    return;
  }
  auto host_port = server::ParseHostPort(o.listen);
  if (!host_port.ok()) {
    checks.push_back({"listen", Level::kFail, host_port.status().message()});
    return;
  }
  auto probe = server::HttpServer::ServeTcp(
      host_port->first, host_port->second,
      [](const server::HttpRequest&, const server::Peer&) { return server::HttpResponse{}; });
  if (probe.ok()) {
    checks.push_back({"listen", Level::kOk, o.listen + " is free for the API"});
    return;
  }
  server::Endpoint own;
  own.unix_path = config::DataDir(o.data_dir) + "/gleaner.sock";
  if (server::HttpCall(own, "GET", "/metrics", "", "").ok()) {
    checks.push_back({"listen", Level::kWarn,
                      o.listen + " is taken; a gleaner runs on " + own.unix_path +
                          ": if it listens there, all is well"});
    return;
  }
  checks.push_back({"listen", Level::kFail,
                    probe.status().message() +
                        ": another program holds it; stop it or give gleaner up another --listen"});
}

// Reached and read without a change: opening the store would migrate its
// schema ahead of servers still running the old release.
Check StoreCheck(const std::string& uri) {
  auto probe = store::ProbeStore(uri);
  if (!probe.ok() && probe.status().code() == core::StatusCode::kNotFound) {
    return {"store", Level::kOk, probe.status().message()};
  }
  if (!probe.ok()) return {"store", Level::kFail, probe.status().message()};
  const std::string where = store::IsPostgresUri(uri) ? "PostgreSQL" : uri;
  const std::string version = "schema version " + std::to_string(probe->schema_version);
  if (probe->schema_version > probe->latest_version) {
    return {"store", Level::kFail,
            where + " has " + version + ", newer than this gleaner's (" +
                std::to_string(probe->latest_version) + "): upgrade gleaner on this host"};
  }
  std::string detail = where + " reached, " + version;
  Level level = Level::kOk;
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
      level = Level::kWarn;
      detail += ": keep both in sync (timedatectl set-ntp true, or chrony)";
    }
  }
  return {"store", level, detail};
}

void CheckStoreAndTls(const DoctorOptions& o, std::vector<Check>& checks) {
  if (o.store.empty() && o.store_file.empty()) {
    checks.push_back(
        {"store", Level::kSkipped, "no --store: gleaner up keeps DATA_DIR/gleaner.db"});
  } else if (auto uri = daemon::StoreUri(o.store, o.store_file); !uri.ok()) {
    checks.push_back({"store", Level::kFail, uri.status().message()});
  } else {
    checks.push_back(StoreCheck(*uri));
  }
  if (o.tls.cert.empty() && o.tls.key.empty()) {
    checks.push_back({"tls", Level::kSkipped, "no --tls-cert"});
  } else if (auto context = daemon::ServerTls(o.tls); !context.ok()) {
    checks.push_back({"tls", Level::kFail, context.status().message()});
  } else {
    checks.push_back({"tls", Level::kOk, o.tls.cert + " and its key load and match"});
  }
}

// Leases, job times and the cluster's "last heard" all compare timestamps
// taken on different hosts.
void CheckClock(const DoctorOptions& o, std::vector<Check>& checks) {
  if (o.server.empty()) {
    checks.push_back({"clock", Level::kSkipped,
                      "no --server: give a coordinator's URL (gleaner --server URL doctor) to "
                      "compare clocks with it"});
    return;
  }
  auto endpoint = server::ParseServerUrl(o.server);
  core::Status tls =
      endpoint.ok() ? server::UseClientTls(o.server_tls, &*endpoint) : endpoint.status();
  if (!tls.ok()) {
    checks.push_back({"clock", Level::kFail, tls.message()});
    return;
  }
  server::HttpClient client(*endpoint);
  const core::RealClock clock;
  const core::TimePoint sent = clock.Now();
  // Any answer carries the server's Date, a refusal for want of a token too.
  auto answer = client.Call("GET", "/metrics", "", "", core::Seconds(10));
  const core::TimePoint heard = clock.Now();
  if (!answer.ok()) {
    checks.push_back({"clock", Level::kFail, answer.status().message()});
    return;
  }
  if (!client.server_date()) {
    checks.push_back({"clock", Level::kWarn, o.server + " sent no Date: is it a gleaner?"});
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
    checks.push_back({"clock", Level::kOk, std::string(said) + " (within a second or two)"});
    return;
  }
  checks.push_back({"clock", abs_s > 30 ? Level::kFail : Level::kWarn,
                    std::string(said) +
                        ": agents' reports and leases compare times across hosts; keep both "
                        "in sync (timedatectl set-ntp true, or chrony)"});
}

}  // namespace

CLI::App* AddDoctorCommand(CLI::App& app, DoctorOptions& options) {
  CLI::App* doctor = app.add_subcommand(
      "doctor",
      "Check what gleaner needs on this host (driver, GPUs, cgroups, data directory, config, "
      "port, store, TLS, clock against --server) and say how to fix each problem");
  doctor->add_option("--data-dir", options.data_dir, "The data directory to check");
  doctor->add_option("--config", options.config,
                     "Config file (default: DATA_DIR/gleaner.toml; for root, "
                     "/etc/gleaner/gleaner.toml where it exists)");
  doctor->add_option("--fake", options.fake, "Skip the driver: simulated GPUs");
  doctor->add_option("--nvml-library", options.nvml_library, "The NVML library to load")
      ->capture_default_str();
  doctor->add_option("--listen", options.listen, "The API's HOST:PORT to check, or none")
      ->capture_default_str();
  doctor->add_option("--store", options.store, "A store to open: postgresql://... or a file");
  doctor->add_option("--store-file", options.store_file, "A file (mode 600) holding --store");
  doctor->add_option("--tls-cert", options.tls.cert, "A PEM certificate to check");
  doctor->add_option("--tls-key", options.tls.key, "Its PEM private key");
  doctor->add_flag("--json", options.json, "Print the checks as JSON");
  return doctor;
}

int RunDoctor(const DoctorOptions& options, std::ostream& out, std::ostream& /*err*/) {
  std::vector<Check> checks;
  CheckDriver(options, checks);
  CheckCgroups(checks);
  CheckDataAndConfig(options, checks);
  CheckListen(options, checks);
  CheckStoreAndTls(options, checks);
  CheckClock(options, checks);
  bool failed = false;
  for (const Check& c : checks) failed = failed || c.level == Level::kFail;
  if (options.json) {
    nlohmann::json doc;
    doc["ok"] = !failed;
    doc["checks"] = nlohmann::json::array();
    for (const Check& c : checks) {
      doc["checks"].push_back({{"name", c.name},
                               {"status", c.level == Level::kFail ? "fail" : LevelName(c.level)},
                               {"detail", c.detail}});
    }
    out << doc.dump(2) << "\n";
  } else {
    for (const Check& c : checks) {
      char head[32];
      std::snprintf(head, sizeof head, "%-4s  %-9s ", std::string(LevelName(c.level)).c_str(),
                    c.name.c_str());
      out << head << c.detail << "\n";
    }
    out << (failed ? "some checks failed: fix them as said above\n" : "nothing failed\n");
  }
  return failed ? kExitFailure : kExitOk;
}

}  // namespace gleaner::cli
