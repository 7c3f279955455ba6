#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/trace_job.h"

namespace gleaner::sim {

// A plain replay: the jobs of a trace arrive at their recorded times on a
// cluster of `gpus` GPUs in nodes of `gpus_per_node`, are started by a
// policy (replay_policy.h) and run for their recorded durations.
struct ReplayConfig {
  int gpus = 0;  // a multiple of gpus_per_node
  int gpus_per_node = 8;
  std::string policy = "fifo";
  // The gleaner policy's Tick interval while jobs wait, in virtual seconds.
  int64_t gleaner_tick_s = 300;
};

struct JobOutcome {
  int64_t start_s = 0;
  int64_t end_s = 0;
};

// The cluster just after one instant of virtual time: a step function,
// recorded only when something changed.
struct ReplaySample {
  int64_t t_s = 0;
  int busy_gpus = 0;    // GPUs jobs asked for and hold
  int queued_jobs = 0;  // arrived, not started
};

struct ReplayResult {
  std::vector<JobOutcome> outcomes;  // per trace job, same index
  std::vector<ReplaySample> timeline;
  int64_t instants = 0;       // distinct times the loop stopped at
  int64_t placed_beside = 0;  // see ReplayPolicy::placed_beside
};

// Runs the replay on a virtual clock. Deterministic: every tie is broken by
// a fixed rule (at one instant, jobs end in the order they started, then
// jobs arrive in trace order, then the policy dispatches), so the same jobs
// and config give the same result, whatever the machine.
//
// InvalidArgument when the config is impossible (no GPUs, gpus not a
// multiple of gpus_per_node) or a job needs more GPUs than the cluster has,
// naming the flag to change; FailedPrecondition when the policy fails.
core::Result<ReplayResult> RunReplay(const std::vector<TraceJob>& jobs, const ReplayConfig& config);

}  // namespace gleaner::sim
