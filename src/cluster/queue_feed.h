#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/log.h"
#include "sched/scheduler.h"
#include "store/job_store.h"

namespace gleaner::cluster {

// Keeps a scheduler's queue in step with the store's, which stays the
// truth: hands it the queued jobs that may run now (dependencies met, under
// their array's cap), takes back those held or cancelled meanwhile, cancels
// jobs whose dependencies can never succeed, and records why each queued
// job waits. The coordinator's (that of `gleaner up` too). The store and
// scheduler must outlive it; not thread-safe.
class QueueFeed {
 public:
  using Tell = std::function<void(const sched::Event&, const Log&)>;

  // `runtimes` (may be null) guesses how long new jobs run, for placement.
  QueueFeed(store::JobStore& jobs, const sched::Scheduler& scheduler, Tell tell,
            const sched::RuntimeHistory* runtimes = nullptr)
      : jobs_(jobs), scheduler_(scheduler), tell_(std::move(tell)), runtimes_(runtimes) {}

  // One scheduler pass, after the GPUs have been told: the queue synced, a
  // Tick, then everything `decided` since the last pass carried out in
  // order (only now that the scheduler knows this pass's GPUs, so a start
  // it took back within the same batch is never made), then why the others
  // wait. `active`: the running and vacating jobs.
  void Pass(const std::vector<store::JobRecord>& active, std::vector<sched::Action>& decided,
            const std::function<void(const sched::Action&)>& carry, const Log& log);

  // The scheduler started or rejected the job: it left the queue.
  void Left(sched::JobId id) { pending_.erase(id); }
  // The scheduler requeued the job (it was preempted).
  void Requeued(sched::JobId id);

 private:
  // `active`: the running and vacating jobs. Returns the queued jobs as
  // they were read.
  std::vector<store::JobRecord> Sync(const std::vector<store::JobRecord>& active, const Log& log);
  // Saves why each of `queued` waits, where that changed, in one
  // transaction. Call after the scheduler's pass.
  void SayWhyTheyWait(const std::vector<store::JobRecord>& queued, const Log& log);

  store::JobStore& jobs_;
  const sched::Scheduler& scheduler_;
  Tell tell_;
  const sched::RuntimeHistory* runtimes_;
  std::set<sched::JobId> pending_;             // queued jobs the scheduler holds
  std::map<sched::JobId, std::string> waits_;  // why queued jobs wait, this pass
};

}  // namespace gleaner::cluster
