#include "cli/monitor_command.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <mutex>
#include <optional>
#include <ostream>
#include <thread>

#include "agent/executor.h"
#include "agent/holder_parker.h"
#include "agent/host_metrics.h"
#include "agent/host_resources.h"
#include "agent/sampler.h"
#include "cli/cost_command.h"
#include "cli/daemon_support.h"
#include "cli/exit_codes.h"
#include "cli/gpu_source.h"
#include "config/config_file.h"
#include "core/format.h"
#include "core/host_name.h"
#include "core/sha256.h"
#include "cost/gpu_hour_prices.h"
#include "daemon/api_options.h"
#include "daemon/daemon_policy.h"
#include "daemon/daemon_start.h"
#include "daemon/host_setup.h"
#include "daemon/host_watch.h"
#include "daemon/local_cluster.h"
#include "daemon/slurm_source.h"
#include "observe/verdict_json.h"
#include "server/api.h"
#include "server/socket_address.h"
#include "store/sqlite_store.h"
#include "views/gpus_json.h"
#include "views/host_view.h"

namespace gleaner::cli {
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
  cmd->add_flag("--accept-gpu-source", options.accept_gpu_source,
                "Write to a data dir whose history came from the other kind of GPU source "
                "(simulated or the real driver)");
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
         "--mode",
         [&options](const std::string& m) {
           options.harvest = m != "monitor";
           options.shadow = m == "shadow";
         },
         "harvest (default); monitor (observe, judge and report; start no job); or shadow "
         "(place jobs as harvest would, start none, report what would have run where)")
      ->check(CLI::IsMember({"harvest", "monitor", "shadow"}));
  cmd->add_option_function<std::string>(
         "--listen",
         [&options](const std::string& a) {
           options.listen = a;
           options.listen_given = true;
         },
         std::string("HTTP API for token holders: HOST:PORT, or none (default ") + kDefaultListen +
             ")")
      ->type_name("HOST:PORT");
  AddServerTlsOptions(*cmd, options.tls);
  return cmd;
}

int RunMonitor(const MonitorOptions& options, const core::Clock& clock,
               const agent::ProcessInspector& inspector, std::ostream& out, std::ostream& err) {
  int start_rc = kExitOk;
  std::optional<daemon::DaemonBase> base =
      StartDaemon(options.data_dir, options.config, options.interval_s, err, &start_rc);
  if (!base) return start_rc;
  if (core::Status s = daemon::CheckWatchdog(base->notifier, base->config.sample_interval);
      !s.ok()) {
    err << "gleaner: " << s.message() << "\n";
    return kExitBadInput;
  }
  const std::string& data_dir = base->data_dir;
  const std::string& config_path = base->config_path;
  const config::GleanerConfig& config = base->config;
  // The database itself is made private below.
  std::error_code ec;
  // It records who submitted what, with their environments: owner only.
  // Created private before SQLite opens it, since its -wal and -shm files
  // take the database's mode when they are created, on the first write.
  auto store = store::SqliteStore::Open(data_dir + "/gleaner.db");
  if (!store.ok()) {
    err << "gleaner: " << store.status().message() << "\n";
    return kExitFailure;
  }
  // A database made by an older gleaner may be readable by others.
  std::filesystem::permissions(
      data_dir + "/gleaner.db",
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
      std::filesystem::perm_options::replace, ec);
  GpuSource source;
  int rc = OpenGpuSource(options.fake, options.nvml_library, clock, inspector, err, &source);
  if (rc == kExitNoDriver && options.up && options.fake.empty()) {
    std::error_code exists_ec;
    const std::optional<std::string> why_not = daemon::WhyNotSimulate(
        options.nvml_library, std::filesystem::exists(config_path, exists_ec));
    if (why_not) {
      err << "gleaner: the NVIDIA driver cannot be used and " << *why_not
          << ", so gleaner does not run on simulated GPUs: fix the driver (`gleaner doctor` "
             "explains), or pass --fake demo to try gleaner on simulated GPUs\n";
      return rc;
    }
    // `gleaner up` by hand on a machine without NVIDIA GPUs: say so
    // loudly, and show what it does on simulated ones rather than stopping.
    err << "gleaner: *** no NVIDIA hardware or driver on this host: running on SIMULATED GPUs "
           "(--fake demo); nothing here is real ***\n";
    rc = OpenGpuSource("demo", options.nvml_library, clock, inspector, err, &source);
  }
  if (rc != kExitOk) return rc;
  if (core::Status s = daemon::CheckGpuSourceKind(data_dir, source, options.accept_gpu_source);
      !s.ok()) {
    err << "gleaner: " << s.message() << "\n";
    return kExitBadInput;
  }
  // The webhook's thread logs too.
  std::mutex log_mu;
  const cluster::Log log = daemon::TimestampedLog(out, log_mu);
  daemon::RememberGpuFaults(data_dir, clock, log, &source);

  const agent::SamplerOptions sampler_options = daemon::SamplerOptionsOf(config, core::Hostname());
  agent::Sampler sampler(*source.backend, *source.inspector, store->get(), clock, sampler_options);
  // A simulated host has a past to recall; a real one starts watching now.
  const core::Duration recalled =
      sampler.Recall(std::max(config.idle.idle_after, config.idle.held_idle_after));
  daemon::HostWatch watch({core::Hostname(), options.up ? "up" : "monitor", config.alert_rules,
                           config.alert_webhook_url, config.idle.max_sample_gap},
                          log);

  const core::RealClock job_clock;  // exit times are wall-clock facts
  agent::Executor executor(job_clock);
  executor.SimulatedGpus(source.scenario_inspector != nullptr);
  // Bridge mode: Slurm runs the jobs (and confines them); else this host does.
  const std::unique_ptr<agent::SlurmRunner> bridge =
      options.harvest ? daemon::MakeBridgeRunner(config.slurm, job_clock) : nullptr;
  agent::JobRunner& runner = bridge ? static_cast<agent::JobRunner&>(*bridge) : executor;
  std::optional<agent::JobCgroups> job_cgroups;
  // Interactive sessions run where this host runs jobs itself.
  std::shared_ptr<core::TerminalHandoff> terminals;
  if (options.harvest && !options.shadow && !bridge) {
    job_cgroups = daemon::UseJobCgroups(data_dir, executor, log);
    terminals = std::make_shared<core::TerminalHandoff>();
    executor.UseTerminals(terminals);
  }
  if (bridge) {
    log("bridge mode: jobs run as Slurm jobs in partition " + config.slurm.bridge.partition +
        " on node " + daemon::SlurmNodeName(config.slurm) + ", submitted as their users");
  }
  // The most GPUs one job can get: all of this host's.
  const int host_gpus = std::max<int>(
      1, static_cast<int>(
             source.backend->Snapshot().value_or(std::vector<gpu::GpuSnapshot>{}).size()));
  std::optional<daemon::LocalCluster> lender;
  if (options.harvest) {
    daemon::LocalClusterOptions layout;
    layout.node = core::Hostname();
    layout.log_dir = data_dir + "/logs";
    layout.state_path = data_dir + "/agent-jobs.json";
    layout.links = source.backend->Topology().value_or(std::vector<gpu::GpuLink>{});
    layout.host = agent::HostResourcesForJobs(config.host);
    layout.scheduler = config.scheduler;
    layout.project_of_user = config.project_of_user;
    layout.approval_timeout = config.approval_timeout;
    layout.history_retention = config.history_retention;
    layout.shadow = options.shadow;
    lender.emplace(**store, runner, clock, std::move(layout), log);
  }
  agent::HostMetrics& host_metrics = watch.metrics();
  if (lender) {
    lender->ReportTo(&host_metrics);
    sampler.WatchLending([&lender] { return lender->LentGpus(); });
  }
  // Only a lender parks; any daemon brings back holders parked before.
  observe::ParkingConfig parking = config.parking;
  parking.enabled = parking.enabled && options.harvest && !options.shadow;
  const std::string parked_path = data_dir + "/parked-holders.json";
  const std::unique_ptr<gpu::CudaCheckpoint> cuda =
      daemon::OpenCudaForParking(parking, config.cuda_library, parked_path, log);
  agent::HolderParker parker(cuda.get(), clock, {parking, parked_path});
  parker.ReportTo(&host_metrics);
  parker.NotifyThrough(
      [&watch, &log](const std::vector<observe::AlertEvent>& e) { watch.Notify(e, log); });
  parker.RecordThrough([&store, &clock, &log](const std::string& kind, const core::GpuUuid& gpu,
                                              const std::string& user, const std::string& detail) {
    auto saved =
        (*store)->AppendEvent({0, clock.Now(), kind, std::nullopt, user, "gleaner", {gpu}, detail});
    if (!saved.ok()) log("history: " + saved.status().message());
  });
  sampler.WatchParking([&parker] { return parker.Parkings(); });
  log(std::string(options.shadow    ? "shadowing (jobs are placed, none starts)"
                  : options.harvest ? "harvesting"
                                    : "monitoring") +
      " " + source.backend->Driver().source + " every " +
      core::FormatDuration(config.sample_interval) + "; state in " + data_dir + "/gleaner.db");
  if (recalled > core::Duration{}) {
    log("recalled the last " + core::FormatDuration(recalled) + " of " +
        source.backend->Driver().source + ", so verdicts start with that history");
  }
  daemon::ResumeFromHistory(sampler, log);
  // [slurm]: Slurm's jobs on this node, asked on a thread of its own.
  // Declared before the API, whose workers read it.
  std::unique_ptr<daemon::SlurmPoller> slurm_poller;
  std::optional<slurm::IdleAllocationAlerts> slurm_alerts;
  slurm::IdleAllocationActions slurm_actions(config.slurm.idle_action);
  std::string slurm_error;  // the failure last logged, so each is logged once
  if (config.slurm.enabled) {
    slurm_poller = std::make_unique<daemon::SlurmPoller>(config.slurm, clock);
    if (config.slurm.idle_alerts) slurm_alerts.emplace(config.slurm.idle_alert);
    log("asking Slurm (" +
        (config.slurm.slurmrestd_url.empty() ? config.slurm.squeue + " --json"
                                             : config.slurm.slurmrestd_url) +
        ") every " + core::FormatDuration(config.slurm.poll_interval) + " for the jobs on node " +
        slurm_poller->node());
  }
  // The latest pass, for GET /v1/gpus: kept by the sampling loop, turned
  // into the document only when asked. Declared before the API so that it
  // outlives the servers' workers.
  std::mutex latest_mu;
  std::optional<agent::HostPass> latest;
  std::unique_ptr<store::SqliteStore> api_store;  // the API threads' own connection
  std::unique_ptr<daemon::DaemonPolicy> policy;   // the policy's versions (gleaner up)
  std::unique_ptr<server::Api> api;
  std::vector<std::unique_ptr<server::HttpServer>> api_servers;
  if (lender) lender->Recover(log);
  parker.Recover(log);
  if (options.up) {
    auto opened = store::SqliteStore::Open(data_dir + "/gleaner.db");
    if (!opened.ok()) {
      err << "gleaner: " << opened.status().message() << "\n";
      return kExitFailure;
    }
    api_store = std::move(opened).value();
    auto policy_store = store::SqliteStore::Open(data_dir + "/gleaner.db");
    auto config_text = daemon::ReadConfigText(config_path);
    if (!policy_store.ok() || !config_text.ok()) {
      err << "gleaner: "
          << (policy_store.ok() ? config_text.status() : policy_store.status()).message() << "\n";
      return kExitFailure;
    }
    policy =
        std::make_unique<daemon::DaemonPolicy>(config_path, std::move(policy_store).value(), clock);
    if (core::Status s = policy->Start(*config_text, log); !s.ok()) {
      err << "gleaner: recording the policy: " << s.message() << "\n";
      return kExitFailure;
    }
    for (const std::string& locked : daemon::LockOutsOf(config)) {
      log("warning: " + locked + " (" + config_path + ")");
    }
    auto common = daemon::DaemonApiOptions(data_dir, config_path, config, api_store.get(), log);
    if (!common.ok()) {
      err << "gleaner: " << common.status().message() << "\n";
      return kExitBadInput;
    }
    server::ApiOptions api_options = std::move(common).value();
    api_options.limits.max_gpus = host_gpus;
    api_options.policy_control = policy.get();
    api_options.terminals = terminals;
    // A submit is placed at once, not at the next pass.
    if (lender) api_options.queue_changed = [&sampler] { sampler.Wake(); };
    api_options.parking = [&parker, &sampler](const std::string& gpu, observe::HolderAsk ask,
                                              const server::Caller& caller) {
      core::Status s = parker.Ask(ask, gpu, caller.user, caller.admin());
      if (s.ok()) sampler.Wake();  // acted on at the next pass, now
      return s;
    };
    const agent::IdleCostPrices idle_prices = daemon::IdleCostPricesOf(
        source.backend->Snapshot().value_or(std::vector<gpu::GpuSnapshot>{}),
        api_options.cost.catalog, config.cost);
    api_options.metrics = [&host_metrics, &lender, &policy, idle_prices](
                              const std::map<std::string, int64_t>& jobs, bool dcgm) {
      agent::JobCounts counts{jobs, std::nullopt, std::nullopt};
      counts.policy_version = policy->ActiveVersion();
      if (lender) counts.scheduling_latency = lender->StartLatency();
      if (auto shadow = lender ? lender->Shadow() : std::nullopt) {
        counts.shadow =
            agent::JobCounts::Shadow{shadow->starts, shadow->gpus_now, shadow->gpu_seconds};
      }
      return host_metrics.Render(counts, idle_prices, dcgm);
    };
    api_options.gpus = [&latest_mu, &latest, &source, &policy, &slurm_poller]() -> nlohmann::json {
      std::optional<agent::HostPass> pass;
      {
        std::lock_guard lock(latest_mu);
        pass = latest;
      }
      if (!pass) return nullptr;
      std::map<core::GpuUuid, observe::Verdict> verdicts;
      for (const observe::Verdict& v : pass->verdicts) verdicts[v.uuid] = v;
      views::HostView view = views::BuildHostView(pass->at, source.backend->Driver(),
                                                  pass->snapshots, *source.inspector, verdicts);
      if (slurm_poller) {
        const daemon::SlurmPoller::Latest slurm = slurm_poller->latest();
        views::AttachSlurmJobs(view, slurm_poller->node(),
                               slurm.jobs ? slurm.jobs->jobs : std::vector<slurm::SlurmJob>{},
                               slurm.jobs ? std::optional(slurm.at) : std::nullopt, slurm.error);
      }
      nlohmann::json doc = views::GpusToJson(view);
      if (policy) doc["policy_version"] = policy->ActiveVersion();  // the dashboard's top bar
      return doc;
    };
    api = std::make_unique<server::Api>(*api_store, job_clock, api_options);
    const auto handler = [&api](const server::HttpRequest& r, const server::Peer& p) {
      return api->Handle(r, p);
    };
    auto unix_server = server::HttpServer::ServeUnix(data_dir + "/gleaner.sock", handler);
    if (!unix_server.ok()) {
      err << "gleaner: " << unix_server.status().message() << "\n";
      return kExitFailure;
    }
    api_servers.push_back(std::move(unix_server).value());
    if (options.listen != "none") {
      auto host_port = server::ParseHostPort(options.listen);
      if (!host_port.ok()) {
        err << "gleaner: --listen: " << host_port.status().message() << "\n";
        return kExitBadInput;
      }
      auto tls = daemon::ServerTls(options.tls);
      if (!tls.ok()) {
        err << "gleaner: " << tls.status().message() << "\n";
        return kExitBadInput;
      }
      auto tcp = server::HttpServer::ServeTcp(host_port->first, host_port->second, handler, *tls);
      if (tcp.ok()) {
        api_servers.push_back(std::move(tcp).value());
      } else if (options.listen_given) {
        err << "gleaner: " << tcp.status().message() << " (choose another --listen)\n";
        return kExitFailure;
      } else {
        log("warning: no HTTP API: " + tcp.status().message() +
            "; pass --listen HOST:PORT (the Unix socket serves local users)");
      }
    }
    std::string where;
    for (const auto& s : api_servers) where += (where.empty() ? "" : " and ") + s->address();
    log("API on " + where);
    if (api_servers.size() > 1) {  // the socket, and TCP
      const std::string dashboard = "dashboard on " + api_servers.back()->address() + "/";
      log(config.ui_anonymous_read
              ? dashboard + "; anyone who reaches it reads it without a token ([ui] anonymous_read)"
              : dashboard + " (sign in with a token from `gleaner token create`)");
    }
    if (daemon::ListensBeyondLoopback(options.listen) && options.tls.cert.empty()) {
      log("warning: the HTTP API listens beyond this host without TLS; tokens cross the network "
          "in clear text: pass --tls-cert and --tls-key (docs/api.md)");
    }
  }

  // Only now, with nothing left that can fail: signals and the deadline.
  std::optional<daemon::StopSignal> stop(std::in_place, options.for_s);
  bool failed = false;
  core::ServiceNotifier& notifier = base->notifier;
  notifier.Ready(std::string(options.up ? "harvesting" : "monitoring") + " " +
                 source.backend->Driver().source);
  sampler.Run(stop->flag(), [&](const agent::HostPass& pass, const core::Status& status) {
    notifier.Alive();
    if (policy) {
      if (daemon::StopSignal::TakeHangup()) policy->Reload(log);
      if (auto next = policy->TakePending()) {
        const config::GleanerConfig& c = next->config;
        api->SetSubmitPolicy(daemon::SubmitPolicyOf(c));
        sampler.SetLendAllow(c.lend_allow);
        sampler.SetIdleConfig(c.idle);
        if (lender) lender->Reconfigure(c.scheduler, c.project_of_user, c.approval_timeout, log);
        log("policy version " + std::to_string(next->version.version) + " by " +
            next->version.author + " in effect" +
            (next->version.note.empty() ? "" : ": " + next->version.note));
      }
    }
    if (!status.ok()) {
      log("error: " + status.message());
      failed = failed || pass.snapshots.empty();
    }
    watch.Observe(pass, log);
    if (slurm_poller) {
      const daemon::SlurmPoller::Latest slurm = slurm_poller->latest();
      if (slurm.error != slurm_error) {
        log(slurm.error.empty() ? "slurm: answering again" : "slurm: " + slurm.error);
        slurm_error = slurm.error;
      }
      // Alerts only from a fresh answer: an old one may name jobs long gone.
      const core::Duration fresh = 3 * config.slurm.poll_interval + config.slurm.timeout;
      if (slurm_alerts && slurm.jobs && pass.at - slurm.at <= fresh) {
        const auto jobs = slurm::JobsOnHost(slurm.jobs->jobs, slurm_poller->node(),
                                            views::SlurmHostGpus(pass.snapshots, pass.verdicts));
        watch.Notify(slurm_alerts->Observe(jobs, pass.at), log);
        std::set<std::string> bridged;
        if (bridge) {
          for (const auto& [id, job] : bridge->running()) bridged.insert(job.slurm_job_id);
        }
        for (const slurm::PlannedIdleAction& a :
             slurm_actions.Decide(jobs, pass.at, slurm_alerts->Firing(), bridged)) {
          daemon::ActOnSlurmIdleJob(config.slurm, a, **store, pass.at, log);
        }
      }
    }
    if (lender) {
      lender->Act(pass, log);
    } else if (options.up) {
      daemon::SayNothingStarts(**store, log);
    }
    parker.Step(pass, lender ? lender->LentGpus() : std::map<core::GpuUuid, agent::LentGpu>{}, log);
    if (api && !pass.verdicts.empty()) {
      std::lock_guard lock(latest_mu);
      latest = pass;
    }
  });
  notifier.Stopping();
  stop.reset();
  // Jobs outlive the daemon; their directory goes only when none is left.
  if (job_cgroups) job_cgroups->RemoveBase().IgnoreError();
  log("stopped");
  return failed ? kExitFailure : kExitOk;
}

}  // namespace gleaner::cli
