#include "cli/monitor_command.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <mutex>
#include <optional>
#include <ostream>
#include <thread>

#include "agent/alert_webhook.h"
#include "agent/executor.h"
#include "agent/harvester.h"
#include "agent/sampler.h"
#include "cli/config_file.h"
#include "cli/exit_codes.h"
#include "cli/gpu_source.h"
#include "core/format.h"
#include "observe/alerts.h"
#include "observe/verdict_json.h"
#include "server/job_api.h"
#include "server/unix_server.h"
#include "store/sqlite_store.h"

namespace gleaner::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void RequestStop(int) { g_stop.store(true); }

std::string Hostname() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? buf : "localhost";
}

}  // namespace

namespace {

void AddDaemonOptions(CLI::App* cmd, MonitorOptions& options) {
  cmd->add_option("--fake", options.fake, "Simulated GPUs from a scenario (demo, or a file)")
      ->type_name("SCENARIO");
  cmd->add_option("--nvml-library", options.nvml_library, "The NVML library to load")
      ->capture_default_str();
  cmd->add_option("--data-dir", options.data_dir,
                  "Where state lives (default: $GLEANER_DATA_DIR, /var/lib/gleaner as root, "
                  "~/.local/share/gleaner otherwise)");
  cmd->add_option("--config", options.config, "Config file (default: DATA_DIR/gleaner.toml)");
  cmd->add_option("--interval", options.interval_s, "Seconds between samples (default 1)")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--for", options.for_s, "Stop after this many seconds")
      ->check(CLI::Range(0.0, 1e9));
}

}  // namespace

CLI::App* AddMonitorCommand(CLI::App& app, MonitorOptions& options) {
  CLI::App* cmd = app.add_subcommand("monitor",
                                     "Watch this host's GPUs: judge idleness over time, keep "
                                     "history, fire alerts (starts no job)");
  AddDaemonOptions(cmd, options);
  return cmd;
}

CLI::App* AddUpCommand(CLI::App& app, MonitorOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "up", "Run gleaner on this host: judge the GPUs and run queued jobs on idle ones");
  AddDaemonOptions(cmd, options);
  cmd->preparse_callback([&options](size_t) { options.up = options.harvest = true; });
  cmd->add_option_function<std::string>(
         "--mode", [&options](const std::string& m) { options.harvest = m == "harvest"; },
         "harvest (default) or monitor (observe, judge and report; start no job)")
      ->check(CLI::IsMember({"harvest", "monitor"}));
  return cmd;
}

int RunMonitor(const MonitorOptions& options, const core::Clock& clock,
               const agent::ProcessInspector& inspector, std::ostream& out, std::ostream& err) {
  const std::string data_dir = DataDir(options.data_dir);
  const std::string config_path =
      options.config.empty() ? data_dir + "/gleaner.toml" : options.config;
  auto config = LoadConfig(config_path, !options.config.empty());
  if (!config.ok()) {
    err << "gleaner: " << config.status().message() << "\n";
    return kExitBadInput;
  }
  if (options.interval_s) {
    config->sample_interval = core::Duration(static_cast<int64_t>(*options.interval_s * 1e6));
    config->idle.max_sample_gap =
        std::max(config->idle.max_sample_gap, 3 * config->sample_interval);
  }
  std::error_code ec;
  // Others may reach the API socket inside (x), but not list the directory;
  // the database itself is made private below.
  const bool created = !std::filesystem::exists(data_dir);
  std::filesystem::create_directories(data_dir, ec);
  if (!ec && created) {
    using std::filesystem::perms;
    std::filesystem::permissions(data_dir,
                                 perms::owner_all | perms::group_exec | perms::others_exec,
                                 std::filesystem::perm_options::replace, ec);
  }
  if (ec) {
    err << "gleaner: cannot create the data directory " << data_dir << ": " << ec.message()
        << " (choose another with --data-dir)\n";
    return kExitFailure;
  }
  auto store = store::SqliteStore::Open(data_dir + "/gleaner.db");
  if (!store.ok()) {
    err << "gleaner: " << store.status().message() << "\n";
    return kExitFailure;
  }
  // It records who submitted what, with their environments: owner only.
  // (SQLite gives its -wal and -shm files the same mode.)
  std::filesystem::permissions(
      data_dir + "/gleaner.db",
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
      std::filesystem::perm_options::replace, ec);
  GpuSource source;
  int rc = OpenGpuSource(options.fake, options.nvml_library, clock, inspector, err, &source);
  if (rc == kExitNoDriver && options.up && options.fake.empty()) {
    // `gleaner up` on a machine without NVIDIA GPUs: say so, and show what
    // it does on simulated ones rather than stopping.
    err << "gleaner: no NVIDIA driver here; running on simulated GPUs (--fake demo) instead\n";
    rc = OpenGpuSource("demo", options.nvml_library, clock, inspector, err, &source);
  }
  if (rc != kExitOk) return rc;

  agent::SamplerOptions sampler_options;
  sampler_options.interval = config->sample_interval;
  sampler_options.retention = config->retention;
  sampler_options.idle = config->idle;
  sampler_options.project_of_user = config->project_of_user;
  agent::Sampler sampler(*source.backend, *source.inspector, store->get(), clock, sampler_options);
  observe::AlertEvaluator alerts(config->alert_rules);
  // The webhook's thread logs too.
  std::mutex log_mu;
  const auto log = [&out, &log_mu](const std::string& line) {
    std::lock_guard lock(log_mu);
    out << observe::Rfc3339(core::RealClock().Now()) << " " << line << "\n";
    out.flush();
  };
  std::unique_ptr<agent::AlertWebhook> webhook;
  if (!config->alert_webhook_url.empty()) {
    webhook = std::make_unique<agent::AlertWebhook>(
        agent::AlertWebhook::Options{config->alert_webhook_url, Hostname()}, log);
  }

  const core::RealClock job_clock;  // exit times are wall-clock facts
  agent::Executor executor(job_clock);
  // The most GPUs one job can get: all of this host's.
  const int host_gpus = std::max<int>(
      1, static_cast<int>(
             source.backend->Snapshot().value_or(std::vector<gpu::GpuSnapshot>{}).size()));
  std::optional<agent::Harvester> harvester;
  if (options.harvest) {
    harvester.emplace(sampler, **store, executor, clock, agent::HarvestMode::kHarvest,
                      data_dir + "/logs", host_gpus);
  }
  log(std::string(options.harvest ? "harvesting" : "monitoring") + " " +
      source.backend->Driver().source + " every " + core::FormatDuration(config->sample_interval) +
      "; state in " + data_dir + "/gleaner.db");
  std::unique_ptr<store::SqliteStore> api_store;  // the API thread's own connection
  std::unique_ptr<server::JobApi> api;
  std::unique_ptr<server::UnixServer> api_server;
  if (harvester) harvester->Recover(log);
  if (options.up) {
    auto opened = store::SqliteStore::Open(data_dir + "/gleaner.db");
    if (!opened.ok()) {
      err << "gleaner: " << opened.status().message() << "\n";
      return kExitFailure;
    }
    api_store = std::move(opened).value();
    sched::JobLimits limits;
    limits.max_gpus = host_gpus;
    api = std::make_unique<server::JobApi>(*api_store, job_clock, limits, data_dir + "/logs");
    auto started = server::UnixServer::Start(data_dir + "/gleaner.sock",
                                             [&api](const server::HttpRequest& r, uint32_t uid) {
                                               return api->Handle(r, {uid, agent::UserName(uid)});
                                             });
    if (!started.ok()) {
      err << "gleaner: " << started.status().message() << "\n";
      return kExitFailure;
    }
    api_server = std::move(started).value();
    log("API on " + data_dir + "/gleaner.sock");
  }

  // Only now, with nothing left that can fail: signals and the deadline.
  g_stop.store(false);
  std::signal(SIGINT, RequestStop);
  std::signal(SIGTERM, RequestStop);
  std::thread deadline;
  if (options.for_s) {
    deadline = std::thread([for_s = *options.for_s] {
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(for_s);
      while (!g_stop.load() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      g_stop.store(true);
    });
  }
  std::map<core::GpuUuid, observe::GpuState> last_state;
  bool failed = false;
  sampler.Run(g_stop, [&](const agent::HostPass& pass, const core::Status& status) {
    if (!status.ok()) {
      log("error: " + status.message());
      failed = failed || pass.snapshots.empty();
    }
    std::vector<observe::AlertEvent> events;
    for (size_t i = 0; i < pass.verdicts.size(); ++i) {
      const observe::Verdict& v = pass.verdicts[i];
      auto it = last_state.find(v.uuid);
      if (it == last_state.end() || it->second != v.state) {
        log("GPU " + std::to_string(pass.snapshots[i].index) + " " + v.uuid.str() + " " +
            (it == last_state.end() ? std::string("-") : std::string(GpuStateName(it->second))) +
            " -> " + std::string(GpuStateName(v.state)) + ": " + v.evidence.reason);
        last_state[v.uuid] = v.state;
      }
      for (observe::AlertEvent& e : alerts.Observe(pass.samples[i], v))
        events.push_back(std::move(e));
    }
    for (const observe::AlertEvent& e : events) {
      log(std::string("alert ") + (e.firing ? "firing " : "resolved ") + e.rule + ": " + e.summary);
    }
    if (webhook) webhook->Send(events);
    if (harvester && !pass.verdicts.empty()) harvester->Act(pass, log);
  });
  if (deadline.joinable()) deadline.join();
  if (webhook) webhook->WaitIdle(core::Seconds(10));
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  log("stopped");
  return failed ? kExitFailure : kExitOk;
}

}  // namespace gleaner::cli
