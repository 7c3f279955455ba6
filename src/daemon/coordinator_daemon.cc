#include "daemon/coordinator_daemon.h"

#include <chrono>
#include <condition_variable>
#include <utility>
#include <vector>

#include "cluster/cluster_view.h"
#include "config/config_file.h"
#include "core/mutex.h"
#include "daemon/api_options.h"
#include "daemon/config_reload.h"
#include "observe/verdict_json.h"
#include "server/agent_api.h"
#include "server/api.h"
#include "server/http_server.h"
#include "server/routing.h"
#include "store/open_store.h"

namespace gleaner::daemon {

namespace {

// How often a server checks its lease; a standby takes over within this of
// the leader's death (PostgreSQL drops a dead session's locks at once).
constexpr auto kLeasePoll = std::chrono::milliseconds(200);
// How often the leader judges hosts and places jobs.
constexpr auto kTickEvery = std::chrono::milliseconds(100);

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

void Leadership::Step() {
  auto holds = lease_->Hold();
  if (!holds.ok()) log_("leader lease: " + holds.status().message());
  const bool leads = holds.ok() && *holds;
  cluster::CoordinatorOptions options;
  bool restart;
  {
    core::MutexLock lock(mu_);
    options = options_;
    restart = std::exchange(restart_, false) && leader_ != nullptr;
  }
  if (leads && (leader() == nullptr || restart)) {
    if (restart) log_("leading afresh on the config read again");
    auto coordinator = StartLeading(store_, clock_, options, log_);
    core::MutexLock lock(mu_);
    leader_ = std::move(coordinator);
  } else if (!leads && leader() != nullptr) {
    log_("lost the leader lease: standing by");
    core::MutexLock lock(mu_);
    leader_.reset();
  } else if (!leads && !said_standby_) {
    log_("standing by: another server holds the leader lease; serving the API meanwhile");
    said_standby_ = true;
  }
}

std::shared_ptr<cluster::Coordinator> Leadership::leader() const {
  core::MutexLock lock(mu_);
  return leader_;
}

void Leadership::Reconfigure(cluster::CoordinatorOptions options) {
  core::MutexLock lock(mu_);
  options_ = std::move(options);
  restart_ = true;
}

cluster::CoordinatorOptions WithConfig(cluster::CoordinatorOptions options,
                                       const config::GleanerConfig& config) {
  options.scheduler = config.scheduler;
  options.project_of_user = config.project_of_user;
  options.approval_timeout = config.approval_timeout;
  options.history_retention = config.history_retention;
  return options;
}

core::Status RunCoordinatorDaemon(const CoordinatorDaemonOptions& options, DaemonBase& base,
                                  const core::Clock& clock, std::ostream& out) {
  const std::string& data_dir = base.data_dir;
  const std::string& config_path = base.config_path;
  const config::GleanerConfig& config = base.config;
  const std::string& where = options.store;
  core::Mutex log_mu;
  const cluster::Log log = TimestampedLog(out, log_mu);
  auto api_store = store::OpenStore(where);
  auto lease = api_store.ok()
                   ? store::OpenLeaderLease(where)
                   : core::Result<std::unique_ptr<store::LeaderLease>>(api_store.status());
  if (!lease.ok()) return core::Unavailable(lease.status().message());
  // The coordinator while this server leads; reports and the API read it.
  Leadership leadership(std::move(lease).value(), where, clock, options.coordinator, log);
  const auto current_leader = [&leadership] { return leadership.leader(); };
  auto common = DaemonApiOptions(data_dir, config_path, config, api_store->get(), log);
  if (!common.ok()) return core::InvalidArgument(common.status().message());
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
  struct QueueNews {  // a struct: its field names its lock, as a local cannot
    core::Mutex mu;
    std::condition_variable cv;
    bool changed GLEANER_GUARDED_BY(mu) = false;
  } queue;
  api_options.queue_changed = [&] {
    {
      core::MutexLock lock(queue.mu);
      queue.changed = true;
    }
    queue.cv.notify_one();
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
  if (!agent_store.ok()) return core::Unavailable(agent_store.status().message());
  server::AgentApi agents(options.join_secret, **agent_store, clock, current_leader, log);
  const auto handler = [&api, &agents](const server::HttpRequest& r, const server::Peer& p) {
    return server::AgentApi::Owns(r) ? agents.Handle(r) : api.Handle(r, p);
  };
  std::vector<std::unique_ptr<server::HttpServer>> servers;
  auto unix_server = server::HttpServer::ServeUnix(data_dir + "/gleaner.sock", handler);
  if (!unix_server.ok()) return core::Unavailable(unix_server.status().message());
  servers.push_back(std::move(unix_server).value());
  auto tcp = server::HttpServer::ServeTcp(options.listen_at.first, options.listen_at.second,
                                          handler, options.tls);
  if (!tcp.ok()) return core::Unavailable(tcp.status().message() + " (choose another --listen)");
  servers.push_back(std::move(tcp).value());
  log("coordinator on " + servers.back()->address() + " and " + servers.front()->address() +
      "; store " + (store::IsPostgresUri(where) ? "PostgreSQL" : where));
  if (ListensBeyondLoopback(options.listen) && options.tls == nullptr) {
    log("warning: no TLS on " + options.listen +
        ": tokens and agent credentials cross the network in clear text; pass --tls-cert and "
        "--tls-key (docs/cluster.md)");
  }

  // What a coordinator takes up on SIGHUP: who may submit what and how
  // jobs are placed; the rest waits for a restart.
  ConfigReload reload(config_path, base.config_text,
                      {"projects", "rules", "scheduler", "sessions"});
  StopSignal stop(options.for_s);
  core::ServiceNotifier& notifier = base.notifier;
  notifier.Ready("coordinator serving the API");
  auto next_hold = std::chrono::steady_clock::now();
  auto next_tick = next_hold;
  while (!stop.stopped()) {
    notifier.Alive();
    if (StopSignal::TakeHangup()) {
      if (auto next = reload.Reload(log)) {
        api.SetSubmitPolicy(SubmitPolicyOf(*next));
        leadership.Reconfigure(WithConfig(options.coordinator, *next));
        next_hold = std::chrono::steady_clock::now();  // lead on it now
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_hold) {
      next_hold = now + kLeasePoll;
      leadership.Step();
    }
    bool changed;
    {
      core::MutexLock lock(queue.mu);
      changed = std::exchange(queue.changed, false);
    }
    if (auto coordinator = current_leader();
        coordinator != nullptr && (now >= next_tick || changed)) {
      coordinator->Tick(log);
      next_tick = std::chrono::steady_clock::now() + kTickEvery;
    }
    // Until the next tick or lease check, or a change to the queue; the
    // stop flag is looked at as often (signals cannot notify).
    core::MutexLock lock(queue.mu);
    const auto until = current_leader() != nullptr ? std::min(next_hold, next_tick) : next_hold;
    queue.mu.AwaitUntil(queue.cv, until, [&] {
      queue.mu.AssertHeld();
      return queue.changed;
    });
  }
  notifier.Stopping();
  servers.clear();
  log("stopped");
  return core::Status::Ok();
}

}  // namespace gleaner::daemon
