#pragma once

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
// A job larger than a node is a gang over as few nodes as hold it, its GPUs
// spread evenly (24 GPUs on 8-GPU nodes: 3 x 8; 12: 2 x 6), placed by the
// Scheduler all or nothing; the first that cannot start is kept the nodes
// it will fit on as they drain.
class GleanerPolicy : public ReplayPolicy {
 public:
  // `options.models`, when given, are the nodes instead of alike ones of
  // `gpus_per_node` H100s; jobs keep their gpu_models there.
  GleanerPolicy(const std::vector<TraceJob>& jobs, const ReplayPolicyOptions& options);

  core::Status Finished(int job, int64_t now_s) override;
  core::Status Submitted(int job, int64_t now_s) override;
  core::Status Dispatch(int64_t now_s, std::vector<int>* started) override;
  std::optional<int64_t> NextWakeup(int64_t now_s) const override;
  size_t queued() const override { return scheduler_.pending_count(); }
  int64_t gangs_started() const override { return gangs_started_; }
  std::optional<sched::ModelPrice> PriceOf(int job) const override {
    return prices_[static_cast<size_t>(job)];
  }

 private:
  core::Status Handle(const sched::Event& event, int64_t now_s);

  const std::vector<TraceJob>& jobs_;
  int gpus_per_node_;
  int64_t tick_s_;
  sched::Scheduler scheduler_;
  core::Status setup_;
  std::vector<int> starts_;  // jobs started since the last Dispatch
  int64_t last_tick_s_ = 0;

  int64_t gangs_started_ = 0;
  sched::ModelPriceFn model_price_;
  std::vector<std::optional<sched::ModelPrice>> prices_;  // per job, once started
};

}  // namespace gleaner::sim
