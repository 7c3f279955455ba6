#pragma once

#include <deque>
#include <vector>

#include "sched/scheduler.h"
#include "sim/replay_policy.h"

namespace gleaner::sim {

// gleaner's own policy in a replay: the very sched::Scheduler the daemon
// runs, told JobSubmitted, JobFinished and a Tick every `tick_s` of virtual
// time while jobs wait. It is not told durations (a live scheduler does not
// know them): expected_runtime stays unset, so backfill has nothing to plan
// with and the default greedy pass runs. Jobs carry no project or user (the
// traces have none), so fair share has nothing to share. A job's trace
// priority (0-3 for openb's QoS levels) becomes the Scheduler's numeric
// priority, times 300, in the normal class: it orders the queue, never
// preempts. A trace priority beyond +-3 would leave -1000..1000 and be
// rejected, which stops the replay with an error.
//
// The Scheduler places jobs on one node only. A job larger than a node is
// placed beside it by the fifo rule for gangs: such jobs wait in arrival
// order; while one waits, every node the Scheduler leaves wholly free is
// taken from it (its GPUs reported not lendable, as an owner returning
// would be) and held until the job has enough whole nodes to start; when it
// ends, its GPUs are reported lendable again. Small jobs are never held back
// for a gang, but the gang's claimed nodes are lost to them meanwhile.
class GleanerPolicy : public ReplayPolicy {
 public:
  // `options.models`, when given, are the nodes instead of alike ones of
  // `gpus_per_node` H100s; jobs keep their gpu_models there.
  GleanerPolicy(const std::vector<TraceJob>& jobs, const ReplayPolicyOptions& options);

  core::Status Finished(int job, int64_t now_s) override;
  core::Status Submitted(int job, int64_t now_s) override;
  core::Status Dispatch(int64_t now_s, std::vector<int>* started) override;
  std::optional<int64_t> NextWakeup(int64_t now_s) const override;
  size_t queued() const override { return scheduler_.pending_count() + gangs_waiting_.size(); }
  int64_t placed_beside() const override { return gangs_placed_; }
  std::optional<sched::ModelPrice> PriceOf(int job) const override {
    return prices_[static_cast<size_t>(job)];
  }

 private:
  core::Status Handle(const sched::Event& event, int64_t now_s);
  core::Status SetNodeLendable(int node, bool lendable, int64_t now_s);
  core::Status StartGangs(int64_t now_s);
  bool IsGang(int job) const { return jobs_[static_cast<size_t>(job)].gpus > gpus_per_node_; }

  const std::vector<TraceJob>& jobs_;
  int gpus_per_node_;
  int64_t tick_s_;
  sched::Scheduler scheduler_;
  core::Status setup_;
  std::vector<int> starts_;  // jobs started since the last Dispatch
  int64_t last_tick_s_ = 0;

  std::deque<int> gangs_waiting_;             // in arrival order
  std::vector<bool> claimed_;                 // per node: held out of the Scheduler
  std::vector<int> claimed_nodes_;            // for the head gang, in claim order
  std::vector<std::vector<int>> gang_nodes_;  // per job, while a gang runs
  int64_t gangs_placed_ = 0;
  sched::ModelPriceFn model_price_;
  std::vector<std::optional<sched::ModelPrice>> prices_;  // per job, once started
};

}  // namespace gleaner::sim
