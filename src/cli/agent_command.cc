// `gleaner agent`: one per GPU host. It samples and judges the host's GPUs
// as `gleaner up` does, keeps the host's own history, and runs what the
// leading coordinator assigns.

#include <algorithm>
#include <memory>
#include <mutex>
#include <ostream>

#include "agent/executor.h"
#include "agent/holder_parker.h"
#include "agent/host_resources.h"
#include "agent/minute_tee.h"
#include "agent/node_agent.h"
#include "agent/sampler.h"
#include "cli/cluster_commands.h"
#include "cli/daemon_support.h"
#include "cli/exit_codes.h"
#include "cli/gpu_source.h"
#include "cluster/agent_credentials.h"
#include "config/catalog_files.h"
#include "config/config_file.h"
#include "core/format.h"
#include "core/host_name.h"
#include "daemon/coordinator_client.h"
#include "daemon/daemon_start.h"
#include "daemon/host_setup.h"
#include "daemon/host_watch.h"
#include "daemon/slurm_source.h"
#include "observe/verdict_json.h"
#include "server/http_client.h"
#include "server/http_server.h"
#include "server/routing.h"
#include "server/socket_address.h"
#include "store/sqlite_store.h"

namespace gleaner::cli {

CLI::App* AddAgentCommand(CLI::App& app, AgentOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "agent", "Lend this host's idle GPUs to a cluster's coordinators (docs/cluster.md)");
  cmd->add_option("--server", options.servers,
                  "The coordinators: http(s)://HOST:PORT, several comma-separated")
      ->required();
  AddClientTlsOptions(*cmd, options.tls, /*env=*/false);
  cmd->add_option("--join-token-file", options.join_token_file,
                  "A one-time join token from `gleaner agent-token create` (needed to join the "
                  "first time, and after an admin replaced this host)");
  // Agents once joined with the cluster's secret; say what replaced it.
  cmd->add_option("--join-secret-file", options.join_secret_file)->group("");
  cmd->add_option("--name", options.name, "This host's name in the cluster (default: hostname)");
  cmd->add_option("--rack", options.rack,
                  "The rack or leaf switch this host is under: a gang over several nodes "
                  "prefers nodes under one (docs/gangs.md)");
  cmd->add_option("--fake", options.fake, "Simulated GPUs from a scenario (demo, or a file)")
      ->type_name("SCENARIO");
  cmd->add_option("--nvml-library", options.nvml_library, "The NVML library to load")
      ->capture_default_str();
  cmd->add_option("--data-dir", options.data_dir,
                  "Where the agent keeps its credential, jobs and history");
  cmd->add_option("--config", options.config, "Config file (default: DATA_DIR/gleaner.toml)");
  cmd->add_option("--interval", options.interval_s, "Seconds between samples and reports")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--for", options.for_s, "Stop after this many seconds")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--metrics-listen", options.metrics_listen,
                  "Serve this host's /metrics (no token) on HOST:PORT, or none")
      ->capture_default_str()
      ->type_name("HOST:PORT");
  return cmd;
}

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

int RunAgent(const AgentOptions& options, const core::Clock& clock,
             const agent::ProcessInspector& inspector, std::ostream& out, std::ostream& err) {
  if (!options.join_secret_file.empty()) {
    err << "gleaner: agents no longer hold the cluster's secret: keep it on the coordinators "
           "only; on a coordinator host, root runs `gleaner agent-token create --host NAME`, "
           "and the agent joins with --join-token-file\n";
    return kExitUsage;
  }
  const std::string name = options.name.empty() ? core::Hostname() : options.name;
  if (auto s = cluster::CheckAgentName(name); !s.ok()) {
    err << "gleaner: --name: " << s.message() << "\n";
    return kExitUsage;
  }
  if (!options.rack.empty()) {
    if (auto s = cluster::CheckAgentName(options.rack); !s.ok()) {
      err << "gleaner: --rack: only letters, digits, '-', '_' and '.', 1 to 128 of them\n";
      return kExitUsage;
    }
  }
  auto endpoints = daemon::ParseCoordinatorUrls(options.servers, options.tls);
  if (!endpoints.ok()) {
    err << "gleaner: " << endpoints.status().message() << "\n";
    return kExitUsage;
  }
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
  const config::GleanerConfig& config = base->config;
  std::mutex log_mu;
  const cluster::Log log = daemon::TimestampedLog(out, log_mu);
  daemon::Coordinators coordinators(*endpoints);
  const core::RealClock job_clock;  // exit times are wall-clock facts
  auto reporter = daemon::AgentReporter::Join({data_dir, name, options.join_token_file},
                                              coordinators, job_clock, log);
  if (!reporter.ok()) {
    err << "gleaner: cannot join the cluster: " << reporter.status().message() << "\n";
    return reporter.status().code() == core::StatusCode::kUnavailable ? kExitFailure
                                                                      : kExitBadInput;
  }
  auto local = store::SqliteStore::Open(data_dir + "/gleaner.db");
  if (!local.ok()) {
    err << "gleaner: " << local.status().message() << "\n";
    return kExitFailure;
  }
  GpuSource source;
  // Simulated GPUs are this agent's own: several agents may play one scenario.
  if (int rc =
          OpenGpuSource(options.fake, options.nvml_library, clock, inspector, err, &source, name);
      rc != kExitOk) {
    return rc;
  }
  RememberGpuFaults(data_dir, clock, log, &source);
  agent::Executor executor(job_clock);
  // Bridge mode: Slurm runs the jobs (and confines them); else this host does.
  const std::unique_ptr<agent::SlurmRunner> bridge =
      daemon::MakeBridgeRunner(config.slurm, job_clock);
  agent::JobRunner& runner = bridge ? static_cast<agent::JobRunner&>(*bridge) : executor;
  std::optional<agent::JobCgroups> job_cgroups;
  if (!bridge) job_cgroups = daemon::UseJobCgroups(data_dir, executor, log);
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
  agent::SamplerOptions sampler_options;
  sampler_options.interval = config.sample_interval;
  sampler_options.retention = config.retention;
  sampler_options.idle = config.idle;
  sampler_options.colocation = config.colocation;
  sampler_options.lend_allow = config.lend_allow;
  sampler_options.project_of_user = config.project_of_user;
  sampler_options.host = name;
  agent::Sampler sampler(*source.backend, *source.inspector, &history, clock, sampler_options);
  sampler.WatchLending([&node] { return node.LentGpus(); });
  sampler.Recall(std::max(config.idle.idle_after, config.idle.held_idle_after));
  daemon::HostWatch watch(
      {name, "agent", config.alert_rules, config.alert_webhook_url, config.idle.max_sample_gap},
      log);
  node.ReportTo(&watch.metrics());
  daemon::ResumeFromHistory(sampler, log);
  const std::string parked_path = data_dir + "/parked-holders.json";
  const std::unique_ptr<gpu::CudaCheckpoint> cuda =
      daemon::OpenCudaForParking(config.parking, config.cuda_library, parked_path, log);
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
  if (options.metrics_listen != "none") {
    auto host_port = server::ParseHostPort(options.metrics_listen);
    if (!host_port.ok()) {
      err << "gleaner: --metrics-listen: " << host_port.status().message() << "\n";
      return kExitUsage;
    }
    auto catalog = config::LoadCatalog(config.cost.catalog_files);
    if (!catalog.ok()) {
      err << "gleaner: " << catalog.status().message() << " ([cost] catalogs in "
          << base->config_path << ")\n";
      return kExitBadInput;
    }
    const agent::IdleCostPrices prices = daemon::IdleCostPricesOf(
        source.backend->Snapshot().value_or(std::vector<gpu::GpuSnapshot>{}), *catalog,
        config.cost);
    auto served = server::HttpServer::ServeTcp(host_port->first, host_port->second,
                                               MetricsOnly(watch.metrics(), prices));
    if (!served.ok()) {
      err << "gleaner: " << served.status().message() << " (choose another --metrics-listen)\n";
      return kExitFailure;
    }
    metrics_server = std::move(served).value();
    log("metrics on " + metrics_server->address() + "/metrics");
  }
  node.Recover(log);
  parker.Recover(log);
  log("agent " + name + " on " + source.backend->Driver().source + ", reporting every " +
      core::FormatDuration(config.sample_interval) + " to " + options.servers);
  daemon::OrderWaiter waiter(*endpoints, sampler, log);
  waiter.Heard((*reporter)->credential(), 0);
  (*reporter)->TellOrdersTo(&waiter);
  waiter.Start();
  {
    daemon::StopSignal stop(options.for_s);
    core::ServiceNotifier& notifier = base->notifier;
    notifier.Ready("agent " + name + " reporting to " + options.servers);
    sampler.Run(stop.flag(), [&](const agent::HostPass& pass, const core::Status& status) {
      notifier.Alive();
      if (!status.ok()) log("error: " + status.message());
      watch.Observe(pass, log);
      // Even a pass that read no GPU reaps, keeps the lease and reports.
      node.Act(pass, log);
      parker.Step(pass, node.LentGpus(), log);
    });
  }
  base->notifier.Stopping();
  waiter.Stop();
  (*reporter)->TellOrdersTo(nullptr);
  // Jobs outlive the agent; their directory goes only when none is left.
  if (job_cgroups) job_cgroups->RemoveBase().IgnoreError();
  log("stopped");
  return kExitOk;
}

}  // namespace gleaner::cli
