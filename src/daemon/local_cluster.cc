#include "daemon/local_cluster.h"

namespace gleaner::daemon {
namespace {

// The agent answers to a coordinator in its own process: it is never
// silent, and no lease runs out.
constexpr core::Duration kNever = std::chrono::hours(24 * 365 * 100);

cluster::CoordinatorOptions CoordinatorOptionsOf(const LocalClusterOptions& options) {
  cluster::CoordinatorOptions c;
  c.scheduler = options.scheduler;
  c.silent_after = kNever;
  c.requeue_after = kNever;
  c.project_of_user = options.project_of_user;
  c.agent_in_process = true;
  c.approval_timeout = options.approval_timeout;
  c.history_retention = options.history_retention;
  c.shadow = options.shadow;
  return c;
}

agent::NodeAgentOptions AgentOptionsOf(const LocalClusterOptions& options) {
  agent::NodeAgentOptions a;
  a.log_dir = options.log_dir;
  a.state_path = options.state_path;
  a.links = options.links;
  a.host = options.host;
  return a;
}

}  // namespace

LocalCluster::LocalCluster(store::Store& store, agent::JobRunner& runner, const core::Clock& clock,
                           LocalClusterOptions options, const cluster::Log& log)
    : store_(store),
      clock_(clock),
      options_(std::move(options)),
      coordinator_(std::make_unique<cluster::Coordinator>(store, clock,
                                                          CoordinatorOptionsOf(options_), log)),
      agent_(runner, clock, AgentOptionsOf(options_),
             [this](const cluster::AgentReport& report) -> core::Result<cluster::AgentReply> {
               return coordinator_->HandleReport(
                   options_.node, report, log_ ? *log_ : [](const std::string&) {});
             }) {}

void LocalCluster::Reconfigure(const sched::SchedulerConfig& scheduler,
                               const std::map<std::string, std::string>& project_of_user,
                               core::Duration approval_timeout, const cluster::Log& log) {
  options_.scheduler = scheduler;
  options_.project_of_user = project_of_user;
  options_.approval_timeout = approval_timeout;
  coordinator_ =
      std::make_unique<cluster::Coordinator>(store_, clock_, CoordinatorOptionsOf(options_), log);
}

void LocalCluster::Recover(const cluster::Log& log) {
  // A data directory from before `gleaner up` kept the agent's state file:
  // the store knows which processes run its jobs (on this host: the only one).
  agent_.Recover(log, [&] {
    std::vector<agent::HeldJob> held;
    auto active = store_.List({store::JobState::kRunning, store::JobState::kVacating});
    if (!active.ok()) log("jobs: " + active.status().message());
    for (const store::JobRecord& j : active.value_or(std::vector<store::JobRecord>{})) {
      held.push_back({{j.id, j.attempts},
                      j.gpus,
                      j.spec.checkpoint_signal,
                      j.spec.grace,
                      j.pid,
                      j.process_started_at,
                      "",  // (jobs run through Slurm are all in the state file)
                      {},  // (a loan beside a holder is not in the store: reclaimed)
                      j.user});
    }
    return held;
  });
}

void LocalCluster::Act(const agent::HostPass& pass, const cluster::Log& log) {
  log_ = &log;
  agent_.Act(pass, log);       // exits, owners' claims and verdicts reach the coordinator
  coordinator_->Tick(log);     // it places and preempts
  agent_.Exchange(pass, log);  // the agent starts what it placed and hears of preemptions
  agent_.Exchange(pass, log);  // signals those, and the store learns of both
  log_ = nullptr;
}

void SayNothingStarts(store::JobStore& jobs, const cluster::Log& log) {
  static const std::string kReason =
      "gleaner up runs in monitor mode and starts no job; restart it with --mode harvest";
  auto queued = jobs.List({store::JobState::kQueued});
  if (!queued.ok()) return;
  std::vector<std::pair<sched::JobId, std::string>> changed;
  for (const store::JobRecord& j : *queued) {
    if (j.reason != kReason) changed.emplace_back(j.id, kReason);
  }
  if (auto s = jobs.Annotate(changed, store::JobState::kQueued); !s.ok())
    log("jobs: " + s.message());
}

}  // namespace gleaner::daemon
