#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "agent/executor.h"
#include "agent/sampler.h"
#include "sched/vacate.h"
#include "store/job_store.h"

namespace gleaner::agent {

enum class HarvestMode {
  kMonitor,  // observe, judge, report; start no job
  kHarvest,  // also run queued jobs on idle GPUs and give them back
};

// One host's harvesting loop, a step at a time: sample and judge the GPUs,
// record jobs that ended, vacate jobs whose GPUs were reclaimed (checkpoint
// signal, grace, kill, requeue), and start queued jobs on idle GPUs. Every
// job move goes through the JobStore's compare-and-set transitions. The
// pieces must outlive it; not thread-safe.
class Harvester {
 public:
  Harvester(Sampler& sampler, store::JobStore& jobs, Executor& executor, const core::Clock& clock,
            HarvestMode mode, std::string log_dir, int max_gpus_per_job);

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
  void RecordExits(const std::function<void(const std::string&)>& log);
  void KillCancelled(const std::function<void(const std::string&)>& log);
  void Vacate(const HostPass& pass, const std::vector<store::JobRecord>& active,
              const std::function<void(const std::string&)>& log);
  void StartJobs(const HostPass& pass, const std::vector<store::JobRecord>& active,
                 const std::function<void(const std::string&)>& log);

  Sampler& sampler_;
  store::JobStore& jobs_;
  Executor& executor_;
  const core::Clock& clock_;
  HarvestMode mode_;
  std::string log_dir_;
  int max_gpus_per_job_;
  sched::VacatePlanner planner_;
  std::set<sched::JobId> cancelled_;  // killed on request, awaiting reaping
};

}  // namespace gleaner::agent
