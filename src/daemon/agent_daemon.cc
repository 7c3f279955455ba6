#include "daemon/agent_daemon.h"

#include <algorithm>
#include <memory>

#include "agent/executor.h"
#include "agent/holder_parker.h"
#include "agent/host_resources.h"
#include "agent/minute_tee.h"
#include "agent/node_agent.h"
#include "agent/sampler.h"
#include "config/catalog_files.h"
#include "core/format.h"
#include "core/mutex.h"
#include "daemon/config_reload.h"
#include "daemon/coordinator_client.h"
#include "daemon/host_setup.h"
#include "daemon/host_watch.h"
#include "daemon/slurm_source.h"
#include "observe/verdict_json.h"
#include "server/http_server.h"
#include "server/routing.h"
#include "store/sqlite_store.h"

namespace gleaner::daemon {

namespace {

// The agent's own HTTP endpoint: GET /metrics, for Prometheus, and nothing
// else. No token: like an exporter, it reveals readings, never jobs.
server::HttpServer::Handler MetricsOnly(agent::HostMetrics& metrics, agent::IdleCostPrices prices) {
  return [&metrics, prices](const server::HttpRequest& r, const server::Peer&) {
    std::string query;
    const std::vector<std::string> seg = server::Segments(r.path, &query);
    if (seg != std::vector<std::string>{"metrics"}) {
      return server::ErrorResponse(core::NotFound("an agent serves only GET /metrics"));
    }
    if (r.method != "GET") return server::WrongMethod(r);
    auto params = server::ParseQuery(query);
    if (!params.ok()) return server::ErrorResponse(params.status());
    const auto dcgm = params->find("dcgm");
    server::HttpResponse out{
        200, metrics.Render({}, prices, dcgm != params->end() && dcgm->second == "1")};
    out.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return out;
  };
}

}  // namespace

core::Status RunAgentDaemon(const AgentDaemonOptions& options, DaemonBase& base, GpuSource source,
                            const core::Clock& clock, std::ostream& out) {
  GLEANER_RETURN_IF_ERROR(CheckWatchdog(base.notifier, base.config.sample_interval));
  const std::string& data_dir = base.data_dir;
  const config::GleanerConfig& config = base.config;
  const std::string& name = options.name;
  core::Mutex log_mu;
  const cluster::Log log = TimestampedLog(out, log_mu);
  Coordinators coordinators(options.coordinators);
  const core::RealClock job_clock;  // exit times are wall-clock facts
  auto reporter =
      AgentReporter::Join({data_dir, name, options.join_token_file}, coordinators, job_clock, log);
  if (!reporter.ok()) {
    return core::Status(reporter.status().code(),
                        "cannot join the cluster: " + reporter.status().message());
  }
  auto local = store::SqliteStore::Open(data_dir + "/gleaner.db");
  if (!local.ok()) return core::Unavailable(local.status().message());
  RememberGpuFaults(data_dir, clock, log, &source);
  agent::Executor executor(job_clock);
  // Bridge mode: Slurm runs the jobs (and confines them); else this host does.
  const std::unique_ptr<agent::SlurmRunner> bridge = MakeBridgeRunner(config.slurm, job_clock);
  agent::JobRunner& runner = bridge ? static_cast<agent::JobRunner&>(*bridge) : executor;
  std::optional<agent::JobCgroups> job_cgroups;
  if (!bridge) job_cgroups = UseJobCgroups(data_dir, executor, log);
  agent::NodeAgentOptions agent_options;
  agent_options.log_dir = data_dir + "/logs";
  agent_options.state_path = data_dir + "/agent-jobs.json";
  agent_options.links = source.backend->Topology().value_or(std::vector<gpu::GpuLink>{});
  agent_options.rack = options.rack;
  agent_options.host = agent::HostResourcesForJobs(config.host);
  agent::NodeAgent node(
      runner, job_clock, agent_options,
      [&reporter](const cluster::AgentReport& report) { return (*reporter)->Report(report); });
  agent::MinuteTee history(**local, [&node](const std::vector<observe::MinuteRollup>& minutes) {
    node.AddMinutes(minutes);
  });
  const agent::SamplerOptions sampler_options = SamplerOptionsOf(config, name);
  agent::Sampler sampler(*source.backend, *source.inspector, &history, clock, sampler_options);
  sampler.WatchLending([&node] { return node.LentGpus(); });
  sampler.Recall(std::max(config.idle.idle_after, config.idle.held_idle_after));
  HostWatch watch(
      {name, "agent", config.alert_rules, config.alert_webhook_url, config.idle.max_sample_gap},
      log);
  node.ReportTo(&watch.metrics());
  ResumeFromHistory(sampler, log);
  const std::string parked_path = data_dir + "/parked-holders.json";
  const std::unique_ptr<gpu::CudaCheckpoint> cuda =
      OpenCudaForParking(config.parking, config.cuda_library, parked_path, log);
  agent::HolderParker parker(cuda.get(), clock, {config.parking, parked_path});
  parker.ReportTo(&watch.metrics());
  parker.NotifyThrough(
      [&watch, &log](const std::vector<observe::AlertEvent>& e) { watch.Notify(e, log); });
  sampler.WatchParking([&parker] { return parker.Parkings(); });
  // `gleaner keep` and `unpark` come through the coordinator, which
  // checked who asked.
  node.OnHolderRequests(
      [&parker](const std::vector<cluster::HolderRequest>& asked, const cluster::Log& to) {
        for (const cluster::HolderRequest& r : asked) {
          const core::Status s = parker.Ask(r.ask, r.gpu.str(), "", true);
          to(std::string(observe::HolderAskName(r.ask)) + " " + r.gpu.str() + ": " +
             (s.ok() ? "done" : s.message()));
        }
      });
  std::unique_ptr<server::HttpServer> metrics_server;
  if (options.metrics_listen) {
    auto catalog = config::LoadCatalog(config.cost.catalog_files);
    if (!catalog.ok()) {
      return core::InvalidArgument(catalog.status().message() + " ([cost] catalogs in " +
                                   base.config_path + ")");
    }
    const agent::IdleCostPrices prices =
        IdleCostPricesOf(source.backend->Snapshot().value_or(std::vector<gpu::GpuSnapshot>{}),
                         *catalog, config.cost);
    auto served =
        server::HttpServer::ServeTcp(options.metrics_listen->first, options.metrics_listen->second,
                                     MetricsOnly(watch.metrics(), prices));
    if (!served.ok()) {
      return core::Unavailable(served.status().message() + " (choose another --metrics-listen)");
    }
    metrics_server = std::move(served).value();
    log("metrics on " + metrics_server->address() + "/metrics");
  }
  node.Recover(log);
  parker.Recover(log);
  log("agent " + name + " on " + source.backend->Driver().source + ", reporting every " +
      core::FormatDuration(config.sample_interval) + " to " + options.servers);
  OrderWaiter waiter(options.coordinators, sampler, log);
  waiter.Heard((*reporter)->credential(), 0);
  (*reporter)->TellOrdersTo(&waiter);
  waiter.Start();
  // What an agent takes up on SIGHUP: when a GPU is idle, and which may
  // be lent ([rules.lend]); the rest of [rules] is the coordinators'.
  ConfigReload reload(base.config_path, base.config_text, {"idle", "rules"});
  {
    StopSignal stop(options.for_s);
    core::ServiceNotifier& notifier = base.notifier;
    notifier.Ready("agent " + name + " reporting to " + options.servers);
    sampler.Run(stop.flag(), [&](const agent::HostPass& pass, const core::Status& status) {
      notifier.Alive();
      if (StopSignal::TakeHangup()) {
        if (auto next = reload.Reload(log)) {
          sampler.SetIdleConfig(next->idle);
          sampler.SetLendAllow(next->lend_allow);
        }
      }
      if (!status.ok()) log("error: " + status.message());
      watch.Observe(pass, log);
      // Even a pass that read no GPU reaps, keeps the lease and reports.
      node.Act(pass, log);
      parker.Step(pass, node.LentGpus(), log);
    });
  }
  base.notifier.Stopping();
  waiter.Stop();
  (*reporter)->TellOrdersTo(nullptr);
  // Jobs outlive the agent; their directory goes only when none is left.
  if (job_cgroups) job_cgroups->RemoveBase().IgnoreError();
  log("stopped");
  return core::Status::Ok();
}

}  // namespace gleaner::daemon
