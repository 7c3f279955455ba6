#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/replay.h"
#include "sim/trace_job.h"

namespace gleaner::sim {

// A scheduling policy as the replay loop (replay.h) drives it. Jobs are
// named by their index in the trace. At each instant of virtual time the
// loop reports the jobs that finished (in the order they started), then the
// jobs that arrived (in trace order), then asks the policy which jobs start
// now. A policy never reads a clock: time is the argument `now_s`.
// Thread-compatible.
class ReplayPolicy {
 public:
  virtual ~ReplayPolicy() = default;

  // Job `job` left its GPUs at `now_s`.
  virtual core::Status Finished(int job, int64_t now_s) = 0;
  // Job `job` arrived at `now_s` and waits.
  virtual core::Status Submitted(int job, int64_t now_s) = 0;
  // Appends the jobs that start at `now_s`, in the order they start.
  virtual core::Status Dispatch(int64_t now_s, std::vector<int>* started) = 0;
  // A time after `now_s` at which the policy wants Dispatch called even if
  // no job arrives or ends (a periodic tick), if any.
  virtual std::optional<int64_t> NextWakeup(int64_t /*now_s*/) const { return std::nullopt; }
  // Jobs waiting to start.
  virtual size_t queued() const = 0;
  // Jobs larger than a node the policy started as gangs over several
  // (gleaner's); 0 for most.
  virtual int64_t gangs_started() const { return 0; }
  // The price of the model a started job runs on, where the policy knows
  // models and the model has one.
  virtual std::optional<sched::ModelPrice> PriceOf(int /*job*/) const { return std::nullopt; }
};

// "fifo", "sjf", "priority" or "gleaner" (docs/simulator.md, "The
// policies", says what each does). `jobs` must outlive the policy.
inline constexpr const char* kReplayPolicyNames = "fifo, sjf, priority, gleaner";
struct ReplayPolicyOptions {
  int nodes = 1;
  int gpus_per_node = 8;
  int64_t gleaner_tick_s = 300;
  std::vector<ReplayNode> models;  // gleaner only: nodes of several models instead
  sched::ModelPriceFn model_price;
  bool cost_aware = true;
};
core::Result<std::unique_ptr<ReplayPolicy>> MakeReplayPolicy(const std::string& name,
                                                             const std::vector<TraceJob>& jobs,
                                                             const ReplayPolicyOptions& options);

}  // namespace gleaner::sim
