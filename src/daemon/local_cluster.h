#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent/host_metrics.h"
#include "agent/job_runner.h"
#include "agent/node_agent.h"
#include "agent/sampler.h"
#include "cluster/coordinator.h"
#include "gpu/gpu_snapshot.h"
#include "store/store.h"

namespace gleaner::daemon {

struct LocalClusterOptions {
  std::string node = "localhost";   // this host's name in the store
  std::string log_dir;              // the jobs' <id>.out and .err
  std::string state_path;           // the agent's jobs, across restarts
  std::vector<gpu::GpuLink> links;  // for NVLink islands
  sched::HostResources host;        // the CPUs and memory jobs may claim here
  sched::SchedulerConfig scheduler;
  std::map<std::string, std::string> project_of_user;
  core::Duration approval_timeout = core::Seconds(int64_t{3} * 24 * 3600);
  core::Duration history_retention = core::Seconds(int64_t{365} * 24 * 3600);
  bool shadow = false;  // --mode shadow: place jobs, start none
};

// One host run as a cluster of one (`gleaner up`): the coordinator
// (cluster::Coordinator, which alone turns the scheduler's decisions into
// effects) and this host's agent (agent::NodeAgent: run, vacate, report)
// in one process, the agent's reports handed to the coordinator as calls
// rather than over HTTP. A pass: the agent reports (exits, claims, the
// verdicts), the coordinator places, and the agent hears at once what to
// start or stop, all within the pass that saw the GPUs. The store is the
// truth about jobs; the pieces must outlive it. Not thread-safe.
class LocalCluster {
 public:
  LocalCluster(store::Store& store, agent::JobRunner& runner, const core::Clock& clock,
               LocalClusterOptions options, const cluster::Log& log);

  // Where preemptions and give-backs are counted; null: nowhere.
  void ReportTo(agent::HostMetrics* metrics) { agent_.ReportTo(metrics); }

  // After a restart: takes back the jobs whose processes still run (same
  // pid, same start time); the others end as they left word, or are
  // requeued. Call once, before the first Act.
  void Recover(const cluster::Log& log);

  // One step on a pass the caller sampled; `log` gets a line for
  // everything that happened.
  void Act(const agent::HostPass& pass, const cluster::Log& log);

  // The GPUs this host's jobs hold, by job (Sampler::WatchLending).
  std::map<core::GpuUuid, agent::LentGpu> LentGpus() const { return agent_.LentGpus(); }

  // A new policy's scheduling rules: the coordinator is made anew with
  // them and takes up the running jobs from the store, as after a restart.
  void Reconfigure(const sched::SchedulerConfig& scheduler,
                   const std::map<std::string, std::string>& project_of_user,
                   core::Duration approval_timeout, const cluster::Log& log);

  // Seconds from submit to start.
  metrics::Histogram::Snapshot StartLatency() const { return coordinator_->StartLatency(); }
  std::optional<cluster::ShadowLedger::Totals> Shadow() const { return coordinator_->Shadow(); }

 private:
  store::Store& store_;
  const core::Clock& clock_;
  LocalClusterOptions options_;
  std::unique_ptr<cluster::Coordinator> coordinator_;
  agent::NodeAgent agent_;
  const cluster::Log* log_ = nullptr;  // the current Act's, for the agent's calls
};

// `gleaner up --mode monitor` starts nothing: each queued job says so, and
// how to change it.
void SayNothingStarts(store::JobStore& jobs, const cluster::Log& log);

}  // namespace gleaner::daemon
