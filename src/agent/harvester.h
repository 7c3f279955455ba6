#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "agent/executor.h"
#include "agent/host_metrics.h"
#include "agent/sampler.h"
#include "cluster/queue_feed.h"
#include "gpu/gpu_snapshot.h"
#include "observe/lending.h"
#include "sched/scheduler.h"
#include "sched/vacate.h"
#include "store/job_store.h"

namespace gleaner::agent {

enum class HarvestMode {
  kMonitor,  // observe, judge, report; start no job
  kHarvest,  // also run queued jobs on idle GPUs and give them back
};

// NVLink islands: GPUs linked to one another directly or through others
// share an island id (the lowest index among them); -1 without NVLink.
std::map<core::GpuUuid, int> NvlinkIslands(const std::vector<gpu::GpuLink>& links,
                                           const std::vector<gpu::GpuSnapshot>& gpus);

// What the scheduler needs to know of this host beyond each pass.
struct HostLayout {
  std::string node = "localhost";
  std::vector<gpu::GpuLink> links;  // for NVLink islands
  sched::SchedulerConfig scheduler;
};

// One host's harvesting loop, a step at a time: sample and judge the GPUs,
// record jobs that ended, vacate jobs whose GPUs were reclaimed (checkpoint
// signal, grace, kill, requeue), and let the scheduler (sched::Scheduler,
// the policy the simulator runs too) start queued jobs on idle GPUs and
// preempt for jobs that outrank others. The store stays the truth about
// jobs; the scheduler is told what changed each pass. Every job move goes
// through the JobStore's compare-and-set transitions. The pieces must
// outlive it; not thread-safe.
class Harvester {
 public:
  Harvester(Sampler& sampler, store::JobStore& jobs, Executor& executor, const core::Clock& clock,
            HarvestMode mode, std::string log_dir, HostLayout host = {});

  // Where starts, preemptions and give-backs are counted; null: nowhere.
  void ReportTo(HostMetrics* metrics) { metrics_ = metrics; }

  // After a restart: takes back jobs whose processes still run (same pid,
  // same start time) and requeues those whose processes are gone. Call once
  // before the first Tick.
  void Recover(const std::function<void(const std::string&)>& log);

  // Samples once, then Act()s on the pass.
  core::Status Tick(const std::function<void(const std::string&)>& log);
  // One step on a pass the caller sampled; `log` receives a line for
  // everything that happened.
  void Act(const HostPass& pass, const std::function<void(const std::string&)>& log);

 private:
  // In monitor mode queued jobs wait forever: they say so.
  void SayMonitorModeStartsNothing(const std::function<void(const std::string&)>& log);
  void RecordExits(const std::function<void(const std::string&)>& log);
  void KillCancelled(const std::function<void(const std::string&)>& log);
  void Vacate(const HostPass& pass, const std::vector<store::JobRecord>& active,
              const std::function<void(const std::string&)>& log);
  // Tells the scheduler what changed (GPUs, queued jobs), runs it and
  // carries out its decisions (harvester_schedule.cc).
  void Schedule(const HostPass& pass, const std::vector<store::JobRecord>& active,
                const std::function<void(const std::string&)>& log);
  void AddNode(const HostPass& pass, const std::map<core::GpuUuid, bool>& lendable,
               const std::function<void(const std::string&)>& log);
  void Carry(const sched::Action& action, const std::function<void(const std::string&)>& log);
  // Claims the job in the store and launches it; false (and the scheduler
  // told) when it could not.
  bool Start(const sched::StartJob& start, const std::function<void(const std::string&)>& log);
  // Passes `event` to the scheduler; its actions wait in decided_.
  void TellScheduler(const sched::Event& event, const std::function<void(const std::string&)>& log);
  // A job the scheduler started has ended.
  void ReportExit(sched::JobId id, bool succeeded, const std::string& reason,
                  const std::function<void(const std::string&)>& log);

  Sampler& sampler_;
  store::JobStore& jobs_;
  Executor& executor_;
  const core::Clock& clock_;
  HarvestMode mode_;
  std::string log_dir_;
  HostLayout host_;
  sched::Scheduler scheduler_;
  cluster::QueueFeed queue_;
  bool node_added_ = false;
  std::map<core::GpuUuid, bool> lendable_;             // as last told to the scheduler
  std::vector<sched::Action> decided_;                 // not yet carried out
  std::map<sched::JobId, std::string> preempting_;     // the scheduler's victims, and why
  std::map<sched::JobId, sched::ResizeJob> resizing_;  // elastic jobs leaving to shrink
  sched::VacatePlanner planner_;
  std::set<sched::JobId> cancelled_;  // killed on request, awaiting reaping
  HostMetrics* metrics_ = nullptr;
};

}  // namespace gleaner::agent
