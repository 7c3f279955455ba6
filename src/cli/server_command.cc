// `gleaner server`: a coordinator. Every server on one store serves the API;
// the one holding the store's leader lease also schedules and takes the
// agents' reports.
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <ostream>
#include <thread>
#include <utility>

#include "cli/cluster_commands.h"
#include "cli/cost_command.h"
#include "cli/daemon_support.h"
#include "cli/exit_codes.h"
#include "cli/gpu_source.h"
#include "cluster/agent_credentials.h"
#include "cluster/cluster_view.h"
#include "cluster/coordinator.h"
#include "config/config_file.h"
#include "core/format.h"
#include "daemon/api_options.h"
#include "daemon/daemon_start.h"
#include "daemon/secrets.h"
#include "observe/verdict_json.h"
#include "server/agent_api.h"
#include "server/api.h"
#include "server/routing.h"
#include "server/socket_address.h"
#include "store/leader_lease.h"
#include "store/open_store.h"

namespace gleaner::cli {

namespace {

// How often a server checks its lease; a standby takes over within this of
// the leader's death (PostgreSQL drops a dead session's locks at once).
constexpr auto kLeasePoll = std::chrono::milliseconds(200);
// How often the leader judges hosts and places jobs.
constexpr auto kTickEvery = std::chrono::milliseconds(100);

core::Duration SecondsToDuration(double s) { return core::Duration(static_cast<int64_t>(s * 1e6)); }

// A coordinator on two store connections of its own, which it keeps: one
// for its ticks and the jobs' moves, one for what reports bring (GPUs,
// minutes); null (and said) when the store cannot be opened.
std::shared_ptr<cluster::Coordinator> StartLeading(const std::string& where,
                                                   const core::Clock& clock,
                                                   const cluster::CoordinatorOptions& options,
                                                   const cluster::Log& log) {
  auto opened = store::OpenStore(where);
  auto for_reports = opened.ok() ? store::OpenStore(where) : opened.status();
  if (!for_reports.ok()) {
    log("cannot lead: " + for_reports.status().message());
    return nullptr;
  }
  log("leading: this server now schedules and takes the agents' reports");
  std::shared_ptr<store::Store> own(std::move(opened).value());
  std::shared_ptr<store::Store> reports(std::move(for_reports).value());
  auto coordinator =
      std::make_shared<cluster::Coordinator>(*own, clock, options, log, reports.get());
  // The stores go with the coordinator, after it.
  return std::shared_ptr<cluster::Coordinator>(
      coordinator.get(), [coordinator, own, reports](cluster::Coordinator*) mutable {
        coordinator.reset();
        own.reset();
        reports.reset();
      });
}

}  // namespace

CLI::App* AddServerCommand(CLI::App& app, ServerOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "server", "Coordinate agents on many GPU hosts: one queue, one scheduler (docs/cluster.md)");
  cmd->add_option("--store", options.store,
                  "postgresql://... (for several servers), or a SQLite file "
                  "(default: DATA_DIR/gleaner.db); never with a password: see --store-file");
  cmd->add_option("--store-file", options.store_file,
                  "A file (mode 600) holding the store's URI, password included; or set "
                  "GLEANER_STORE, or keep the password in libpq's ~/.pgpass");
  cmd->add_option("--listen", options.listen, "HTTP API and agent reports: HOST:PORT")
      ->capture_default_str();
  cmd->add_option("--join-secret-file", options.join_secret_file,
                  "The cluster's secret, which signs agent credentials: the coordinators' only, "
                  "never on an agent (mode 600)")
      ->required();
  cmd->add_option("--data-dir", options.data_dir, "Where the Unix socket and a SQLite store live");
  cmd->add_option("--config", options.config, "Config file (default: DATA_DIR/gleaner.toml)");
  cmd->add_option("--silent-after", options.silent_after_s,
                  "Seconds without a report before a host's GPUs are unknown")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  cmd->add_option("--requeue-after", options.requeue_after_s,
                  "Seconds without a report before a host's jobs are requeued elsewhere (the "
                  "agents' lease)")
      ->capture_default_str()
      ->check(CLI::Range(5.0, 86400.0));
  cmd->add_option("--max-gpus-per-host", options.max_gpus_per_host,
                  "The most GPUs one host may report: an agent claiming more is refused")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--for", options.for_s, "Stop after this many seconds")
      ->check(CLI::Range(0.0, 1e9));
  AddServerTlsOptions(*cmd, options.tls);
  return cmd;
}

int RunServer(const ServerOptions& options, const core::Clock& clock, std::ostream& out,
              std::ostream& err) {
  if (options.requeue_after_s <= options.silent_after_s) {
    err << "gleaner: --requeue-after (" << options.requeue_after_s
        << " s) must be longer than --silent-after (" << options.silent_after_s << " s)\n";
    return kExitUsage;
  }
  int start_rc = kExitOk;
  std::optional<daemon::DaemonBase> base =
      StartDaemon(options.data_dir, options.config, std::nullopt, err, &start_rc);
  if (!base) return start_rc;
  const std::string& data_dir = base->data_dir;
  const std::string& config_path = base->config_path;
  const config::GleanerConfig& config = base->config;
  auto secret = daemon::ReadJoinSecret(options.join_secret_file);
  if (!secret.ok()) {
    err << "gleaner: " << secret.status().message() << "\n";
    return kExitBadInput;
  }
  auto store_uri = daemon::StoreUri(options.store, options.store_file);
  if (!store_uri.ok()) {
    err << "gleaner: " << store_uri.status().message() << "\n";
    return kExitBadInput;
  }
  const std::string where = store_uri->empty() ? data_dir + "/gleaner.db" : *store_uri;
  std::mutex log_mu;
  const cluster::Log log = daemon::TimestampedLog(out, log_mu);
  auto api_store = store::OpenStore(where);
  auto lease = api_store.ok()
                   ? store::OpenLeaderLease(where)
                   : core::Result<std::unique_ptr<store::LeaderLease>>(api_store.status());
  if (!lease.ok()) {
    err << "gleaner: " << lease.status().message() << "\n";
    return kExitFailure;
  }
  cluster::CoordinatorOptions coordinator_options;
  coordinator_options.scheduler = config.scheduler;
  coordinator_options.project_of_user = config.project_of_user;
  coordinator_options.silent_after = SecondsToDuration(options.silent_after_s);
  coordinator_options.requeue_after = SecondsToDuration(options.requeue_after_s);
  coordinator_options.max_gpus_per_host = static_cast<size_t>(options.max_gpus_per_host);
  coordinator_options.approval_timeout = config.approval_timeout;
  coordinator_options.history_retention = config.history_retention;

  // The coordinator while this server leads; reports and the API read it.
  std::mutex leader_mu;
  std::shared_ptr<cluster::Coordinator> leader;
  const auto current_leader = [&leader_mu, &leader] {
    std::lock_guard lock(leader_mu);
    return leader;
  };
  auto common = daemon::DaemonApiOptions(data_dir, config_path, config, api_store->get(), log);
  if (!common.ok()) {
    err << "gleaner: " << common.status().message() << "\n";
    return kExitBadInput;
  }
  server::ApiOptions api_options = std::move(common).value();
  api_options.limits.max_gpus = 64;     // the scheduler rejects what no host can hold
  api_options.limits.max_nodes = 1024;  // and gangs larger than the cluster or a rack
  api_options.gpus = [&current_leader, &clock]() -> nlohmann::json {
    auto coordinator = current_leader();
    if (coordinator == nullptr) return nullptr;
    return cluster::ClusterToJson(coordinator->Hosts(/*with_details=*/true), clock.Now());
  };
  api_options.metrics = [&current_leader, &clock](const std::map<std::string, int64_t>& jobs,
                                                  bool /*dcgm*/) {
    auto coordinator = current_leader();
    return cluster::RenderClusterMetrics(
        coordinator ? coordinator->Hosts() : std::vector<cluster::HostView>{}, jobs,
        coordinator ? coordinator->StartLatency() : metrics::Histogram({}).Read(),
        coordinator != nullptr, clock.Now());
  };
  // A submit (or cancel, hold, release) is placed at the next turn of the
  // loop, not the next tick: with agents' long polls, a free GPU starts it
  // at once.
  std::mutex queue_mu;
  std::condition_variable queue_cv;
  bool queue_changed = false;  // guarded by queue_mu
  api_options.queue_changed = [&] {
    {
      std::lock_guard lock(queue_mu);
      queue_changed = true;
    }
    queue_cv.notify_one();
  };
  // A job's log is on the host that ran it: asked of its agent, answered
  // when the piece comes (the request holds no worker meanwhile).
  api_options.remote_logs = [&current_leader](const store::JobRecord& job, bool stderr_stream,
                                              uint64_t offset) {
    const std::shared_ptr<cluster::Coordinator> coordinator = current_leader();
    if (coordinator == nullptr) {
      return server::ErrorResponse(
          core::Unavailable("this coordinator stands by; ask the leading one for logs"));
    }
    server::HttpResponse late = server::ErrorResponse(
        core::Unavailable("the host of job " + std::to_string(job.id) + " did not answer in time"));
    const std::string state(store::JobStateName(job.state));
    late.later = std::make_shared<server::LaterResponse>(server::LaterResponse{
        core::Seconds(15), [coordinator, job, stderr_stream, offset, state](auto answer) {
          coordinator->ReadLog(job, stderr_stream, offset,
                               [answer, state](core::Result<cluster::LogChunk> chunk) {
                                 answer(chunk.ok() ? server::Json(200, {{"data", chunk->data},
                                                                        {"offset", chunk->next},
                                                                        {"state", state}})
                                                   : server::ErrorResponse(chunk.status()));
                               });
        }});
    return late;
  };
  // `gleaner keep` and `unpark`: passed on to the GPU's host, which
  // records what it does with a parked holder in its own log.
  api_options.parking = [&current_leader, &log](const std::string& gpu, observe::HolderAsk ask,
                                                const server::Caller& caller) {
    const std::shared_ptr<cluster::Coordinator> coordinator = current_leader();
    if (coordinator == nullptr) {
      return core::Unavailable("this coordinator stands by; ask the leading one");
    }
    core::Status s = coordinator->AskHolder(gpu, ask, caller.user, caller.admin());
    if (s.ok() && observe::GivesUp(ask)) {
      log(caller.user + " asked GPU " + gpu + "'s host to " + std::string(HolderAskName(ask)) +
          " its parked holder");
    }
    return s;
  };
  api_options.host_gpus = [&current_leader, &log](const std::string& host, bool accept) {
    const std::shared_ptr<cluster::Coordinator> coordinator = current_leader();
    if (coordinator == nullptr) {
      return core::Result<int64_t>(
          core::Unavailable("this coordinator stands by; ask the leading one"));
    }
    return accept ? coordinator->AcceptHostGpus(host, log) : coordinator->ForgetHost(host, log);
  };
  server::Api api(**api_store, clock, api_options);
  // Agents' joins and credentials have a connection of their own, so a
  // busy API never holds up a report.
  auto agent_store = store::OpenStore(where);
  if (!agent_store.ok()) {
    err << "gleaner: " << agent_store.status().message() << "\n";
    return kExitFailure;
  }
  server::AgentApi agents(*secret, **agent_store, clock, current_leader, log);
  const auto handler = [&api, &agents](const server::HttpRequest& r, const server::Peer& p) {
    return server::AgentApi::Owns(r) ? agents.Handle(r) : api.Handle(r, p);
  };
  std::vector<std::unique_ptr<server::HttpServer>> servers;
  auto unix_server = server::HttpServer::ServeUnix(data_dir + "/gleaner.sock", handler);
  if (!unix_server.ok()) {
    err << "gleaner: " << unix_server.status().message() << "\n";
    return kExitFailure;
  }
  servers.push_back(std::move(unix_server).value());
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
  if (!tcp.ok()) {
    err << "gleaner: " << tcp.status().message() << " (choose another --listen)\n";
    return kExitFailure;
  }
  servers.push_back(std::move(tcp).value());
  log("coordinator on " + servers.back()->address() + " and " + servers.front()->address() +
      "; store " + (store::IsPostgresUri(where) ? "PostgreSQL" : where));
  if (daemon::ListensBeyondLoopback(options.listen) && options.tls.cert.empty()) {
    log("warning: no TLS on " + options.listen +
        ": tokens and agent credentials cross the network in clear text; pass --tls-cert and "
        "--tls-key (docs/cluster.md)");
  }

  daemon::StopSignal stop(options.for_s);
  core::ServiceNotifier& notifier = base->notifier;
  notifier.Ready("coordinator serving the API");
  bool said_standby = false;
  auto next_hold = std::chrono::steady_clock::now();
  auto next_tick = next_hold;
  while (!stop.stopped()) {
    notifier.Alive();
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_hold) {
      next_hold = now + kLeasePoll;
      auto holds = (*lease)->Hold();
      if (!holds.ok()) log("leader lease: " + holds.status().message());
      const bool leads = holds.ok() && *holds;
      if (leads && current_leader() == nullptr) {
        auto coordinator = StartLeading(where, clock, coordinator_options, log);
        std::lock_guard lock(leader_mu);
        leader = std::move(coordinator);
      } else if (!leads && current_leader() != nullptr) {
        log("lost the leader lease: standing by");
        std::lock_guard lock(leader_mu);
        leader.reset();
      } else if (!leads && !said_standby) {
        log("standing by: another server holds the leader lease; serving the API meanwhile");
        said_standby = true;
      }
    }
    bool changed;
    {
      std::lock_guard lock(queue_mu);
      changed = std::exchange(queue_changed, false);
    }
    if (auto coordinator = current_leader();
        coordinator != nullptr && (now >= next_tick || changed)) {
      coordinator->Tick(log);
      next_tick = std::chrono::steady_clock::now() + kTickEvery;
    }
    // Until the next tick or lease check, or a change to the queue; the
    // stop flag is looked at as often (signals cannot notify).
    std::unique_lock lock(queue_mu);
    const auto until = current_leader() != nullptr ? std::min(next_hold, next_tick) : next_hold;
    queue_cv.wait_until(lock, until, [&] { return queue_changed; });
  }
  notifier.Stopping();
  servers.clear();
  log("stopped");
  return kExitOk;
}

}  // namespace gleaner::cli
