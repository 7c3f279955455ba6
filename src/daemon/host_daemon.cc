#include "daemon/host_daemon.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

#include "agent/executor.h"
#include "agent/holder_parker.h"
#include "agent/host_metrics.h"
#include "agent/host_resources.h"
#include "agent/sampler.h"
#include "config/config_file.h"
#include "core/format.h"
#include "core/host_name.h"
#include "core/mutex.h"
#include "daemon/api_options.h"
#include "daemon/config_reload.h"
#include "daemon/daemon_policy.h"
#include "daemon/host_setup.h"
#include "daemon/host_watch.h"
#include "daemon/local_cluster.h"
#include "daemon/slurm_source.h"
#include "net/socket_address.h"
#include "server/api.h"
#include "store/sqlite_store.h"
#include "views/gpus_json.h"
#include "views/host_view.h"

namespace gleaner::daemon {

core::Status RunHostDaemon(const HostDaemonOptions& options, DaemonBase& base, GpuSource source,
                           const core::Clock& clock, std::ostream& out) {
  GLEANER_RETURN_IF_ERROR(CheckWatchdog(base.notifier, base.config.sample_interval));
  const std::string& data_dir = base.data_dir;
  const std::string& config_path = base.config_path;
  const config::GleanerConfig& config = base.config;
  // The database itself is made private below.
  std::error_code ec;
  // It records who submitted what, with their environments: owner only.
  // Created private before SQLite opens it, since its -wal and -shm files
  // take the database's mode when they are created, on the first write.
  auto store = store::SqliteStore::Open(data_dir + "/gleaner.db");
  if (!store.ok()) return core::Unavailable(store.status().message());
  // A database made by an older gleaner may be readable by others.
  std::filesystem::permissions(
      data_dir + "/gleaner.db",
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
      std::filesystem::perm_options::replace, ec);
  if (core::Status s = CheckGpuSourceKind(data_dir, source, options.accept_gpu_source); !s.ok()) {
    return s;
  }
  // The webhook's thread logs too.
  core::Mutex log_mu;
  const cluster::Log log = TimestampedLog(out, log_mu);
  RememberGpuFaults(data_dir, clock, log, &source);

  const agent::SamplerOptions sampler_options = SamplerOptionsOf(config, core::Hostname());
  agent::Sampler sampler(*source.backend, *source.inspector, store->get(), clock, sampler_options);
  // A simulated host has a past to recall; a real one starts watching now.
  const core::Duration recalled =
      sampler.Recall(std::max(config.idle.idle_after, config.idle.held_idle_after));
  HostWatch watch({core::Hostname(), options.up ? "up" : "monitor", config.alert_rules,
                   config.alert_webhook_url, config.idle.max_sample_gap},
                  log);

  const core::RealClock job_clock;  // exit times are wall-clock facts
  agent::Executor executor(job_clock);
  executor.SimulatedGpus(source.scenario_inspector != nullptr);
  // Bridge mode: Slurm runs the jobs (and confines them); else this host does.
  const std::unique_ptr<agent::SlurmRunner> bridge =
      options.harvest ? MakeBridgeRunner(config.slurm, job_clock) : nullptr;
  agent::JobRunner& runner = bridge ? static_cast<agent::JobRunner&>(*bridge) : executor;
  std::optional<agent::JobCgroups> job_cgroups;
  // Interactive sessions run where this host runs jobs itself.
  std::shared_ptr<core::TerminalHandoff> terminals;
  if (options.harvest && !options.shadow && !bridge) {
    job_cgroups = UseJobCgroups(data_dir, executor, log);
    terminals = std::make_shared<core::TerminalHandoff>();
    executor.UseTerminals(terminals);
  }
  if (bridge) {
    log("bridge mode: jobs run as Slurm jobs in partition " + config.slurm.bridge.partition +
        " on node " + SlurmNodeName(config.slurm) + ", submitted as their users");
  }
  // The most GPUs one job can get: all of this host's.
  const int host_gpus = std::max<int>(
      1, static_cast<int>(
             source.backend->Snapshot().value_or(std::vector<gpu::GpuSnapshot>{}).size()));
  std::optional<LocalCluster> lender;
  if (options.harvest) {
    LocalClusterOptions layout;
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
      OpenCudaForParking(parking, config.cuda_library, parked_path, log);
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
  ResumeFromHistory(sampler, log);
  // [slurm]: Slurm's jobs on this node, asked on a thread of its own.
  // Declared before the API, whose workers read it.
  std::unique_ptr<SlurmPoller> slurm_poller;
  std::optional<slurm::IdleAllocationAlerts> slurm_alerts;
  slurm::IdleAllocationActions slurm_actions(config.slurm.idle_action);
  std::string slurm_error;  // the failure last logged, so each is logged once
  if (config.slurm.enabled) {
    slurm_poller = std::make_unique<SlurmPoller>(config.slurm, clock);
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
  struct LatestPass {  // a struct: its field names its lock, as a local cannot
    core::Mutex mu;
    std::optional<agent::HostPass> pass GLEANER_GUARDED_BY(mu);
  } latest;
  std::unique_ptr<store::SqliteStore> api_store;  // the API threads' own connection
  std::unique_ptr<DaemonPolicy> policy;           // the policy's versions (gleaner up)
  std::unique_ptr<server::Api> api;
  std::vector<std::unique_ptr<server::HttpServer>> api_servers;
  if (lender) lender->Recover(log);
  parker.Recover(log);
  if (options.up) {
    auto opened = store::SqliteStore::Open(data_dir + "/gleaner.db");
    if (!opened.ok()) return core::Unavailable(opened.status().message());
    api_store = std::move(opened).value();
    auto policy_store = store::SqliteStore::Open(data_dir + "/gleaner.db");
    if (!policy_store.ok()) return core::Unavailable(policy_store.status().message());
    policy = std::make_unique<DaemonPolicy>(config_path, std::move(policy_store).value(), clock);
    if (core::Status s = policy->Start(base.config_text, log); !s.ok()) {
      return core::Unavailable("recording the policy: " + s.message());
    }
    for (const std::string& locked : LockOutsOf(config)) {
      log("warning: " + locked + " (" + config_path + ")");
    }
    auto common = DaemonApiOptions(data_dir, config_path, config, api_store.get(), log);
    if (!common.ok()) return core::InvalidArgument(common.status().message());
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
    const agent::IdleCostPrices idle_prices =
        IdleCostPricesOf(source.backend->Snapshot().value_or(std::vector<gpu::GpuSnapshot>{}),
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
    api_options.gpus = [&latest, &source, &policy, &slurm_poller]() -> nlohmann::json {
      std::optional<agent::HostPass> pass;
      {
        core::MutexLock lock(latest.mu);
        pass = latest.pass;
      }
      if (!pass) return nullptr;
      std::map<core::GpuUuid, observe::Verdict> verdicts;
      for (const observe::Verdict& v : pass->verdicts) verdicts[v.uuid] = v;
      views::HostView view = views::BuildHostView(pass->at, source.backend->Driver(),
                                                  pass->snapshots, *source.inspector, verdicts);
      if (slurm_poller) {
        const SlurmPoller::Latest slurm = slurm_poller->latest();
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
    if (!unix_server.ok()) return core::Unavailable(unix_server.status().message());
    api_servers.push_back(std::move(unix_server).value());
    if (options.listen != "none") {
      auto host_port = net::ParseHostPort(options.listen);
      if (!host_port.ok()) {
        return core::InvalidArgument("--listen: " + host_port.status().message());
      }
      auto tls = ServerTls(options.tls);
      if (!tls.ok()) return core::InvalidArgument(tls.status().message());
      auto tcp = server::HttpServer::ServeTcp(host_port->first, host_port->second, handler, *tls);
      if (tcp.ok()) {
        api_servers.push_back(std::move(tcp).value());
      } else if (options.listen_given) {
        return core::Unavailable(tcp.status().message() + " (choose another --listen)");
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
    if (ListensBeyondLoopback(options.listen) && options.tls.cert.empty()) {
      log("warning: the HTTP API listens beyond this host without TLS; tokens cross the network "
          "in clear text: pass --tls-cert and --tls-key (docs/api.md)");
    }
  }

  // `gleaner monitor` keeps no policy versions: on SIGHUP it takes up the
  // idle rules, as an agent does.
  ConfigReload reload(config_path, base.config_text, {"idle", "rules"});
  // Only now, with nothing left that can fail: signals and the deadline.
  std::optional<StopSignal> stop(std::in_place, options.for_s);
  bool failed = false;
  core::ServiceNotifier& notifier = base.notifier;
  notifier.Ready(std::string(options.up ? "harvesting" : "monitoring") + " " +
                 source.backend->Driver().source);
  sampler.Run(stop->flag(), [&](const agent::HostPass& pass, const core::Status& status) {
    notifier.Alive();
    if (policy) {
      if (StopSignal::TakeHangup()) policy->Reload(log);
      if (auto next = policy->TakePending()) {
        const config::GleanerConfig& c = next->config;
        api->SetSubmitPolicy(SubmitPolicyOf(c));
        sampler.SetLendAllow(c.lend_allow);
        sampler.SetIdleConfig(c.idle);
        if (lender) lender->Reconfigure(c.scheduler, c.project_of_user, c.approval_timeout, log);
        log("policy version " + std::to_string(next->version.version) + " by " +
            next->version.author + " in effect" +
            (next->version.note.empty() ? "" : ": " + next->version.note));
      }
    } else if (StopSignal::TakeHangup()) {
      if (auto next = reload.Reload(log)) {
        sampler.SetLendAllow(next->lend_allow);
        sampler.SetIdleConfig(next->idle);
      }
    }
    if (!status.ok()) {
      log("error: " + status.message());
      failed = failed || pass.snapshots.empty();
    }
    watch.Observe(pass, log);
    if (slurm_poller) {
      const SlurmPoller::Latest slurm = slurm_poller->latest();
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
          ActOnSlurmIdleJob(config.slurm, a, **store, pass.at, log);
        }
      }
    }
    if (lender) {
      lender->Act(pass, log);
    } else if (options.up) {
      SayNothingStarts(**store, log);
    }
    parker.Step(pass, lender ? lender->LentGpus() : std::map<core::GpuUuid, agent::LentGpu>{}, log);
    if (api && !pass.verdicts.empty()) {
      core::MutexLock lock(latest.mu);
      latest.pass = pass;
    }
  });
  notifier.Stopping();
  stop.reset();
  // Jobs outlive the daemon; their directory goes only when none is left.
  if (job_cgroups) job_cgroups->RemoveBase().IgnoreError();
  log("stopped");
  return failed ? core::Unavailable("the GPUs could not be read (the log says why)")
                : core::Status::Ok();
}

}  // namespace gleaner::daemon
