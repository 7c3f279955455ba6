#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "sched/model_cost.h"
#include "sim/trace_job.h"

namespace gleaner::sim {

// A plain replay: the jobs of a trace arrive at their recorded times on a
// cluster of `gpus` GPUs in nodes of `gpus_per_node`, are started by a
// policy (replay_policy.h) and run for their recorded durations.
struct ReplayNode {
  std::string model;  // as jobs' gpu_models name it ("T4", "V100M32")
  int gpus = 0;
};

// Whether `job` fits on `node`: enough GPUs, and a model it may use (a
// substring of the node's, as the scheduler matches constraints).
bool NodeCanRun(const ReplayNode& node, const TraceJob& job);

struct ReplayConfig {
  int gpus = 0;  // a multiple of gpus_per_node
  int gpus_per_node = 8;
  std::string policy = "fifo";
  // The gleaner policy's Tick interval while jobs wait, in virtual seconds.
  int64_t gleaner_tick_s = 300;
  // A cluster of these nodes of several models instead of `gpus` alike
  // ones; gleaner's policy only, jobs within one node.
  std::vector<ReplayNode> nodes;
  // Prices per model (ModelPrice::model is what the nodes say). A job on a
  // priced model runs for its recorded duration times the cluster's mean
  // speed (over its priced GPUs) over its model's speed: the trace's
  // durations are taken as work done at the cluster's average pace. Its
  // GPU-hours are then priced (ReplayCost).
  sched::ModelPriceFn model_price;
  bool cost_aware = true;  // the Scheduler's cost-aware choice between models
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

// What the jobs' GPU-hours cost, where the config priced models.
struct ReplayCost {
  double gpu_hour_cost = 0;  // sum over jobs of GPUs x hours run x the model's price
  // The same jobs' work, in hours of an A100 (recorded GPU-hours at the
  // cluster's mean speed): the same whatever the placement.
  double work_a100_hours = 0;
  std::map<std::string, double> gpu_hours_by_model;
  int64_t unpriced_jobs = 0;  // ran on a model without a price: neither counted
};

struct ReplayResult {
  std::vector<JobOutcome> outcomes;  // per trace job, same index
  std::vector<ReplaySample> timeline;
  int64_t instants = 0;            // distinct times the loop stopped at
  int64_t gangs_started = 0;       // see ReplayPolicy::gangs_started
  std::optional<ReplayCost> cost;  // with config.model_price
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
