#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/replay.h"

namespace gleaner::sim {

// Mean, median and 99th percentile of a set of durations in seconds. The
// median of an even count is the mean of the middle two; p99 is the
// nearest-rank value (the smallest x with at least 99 % of values <= x).
struct Summary {
  double mean_s = 0;
  double median_s = 0;
  double p99_s = 0;
};
Summary Summarize(std::vector<int64_t> values_s);

// Adds "mean_NAME_s", "median_NAME_s" and "p99_NAME_s" to `j`.
void AddSummaryJson(nlohmann::ordered_json& j, const std::string& name, const Summary& s);

// What a plain replay achieved. Everything here follows from the trace and
// the config alone: no wall times, no paths, so identical runs give
// identical numbers.
struct ReplayMetrics {
  int64_t jobs = 0;
  int64_t makespan_s = 0;  // first arrival to last end
  Summary jct;             // completion time: end - arrival
  Summary queue;           // waiting time: start - arrival
  // GPU-seconds the jobs asked for and ran / (cluster GPUs x makespan).
  double utilization = 0;
  int64_t gpu_seconds = 0;
  int peak_busy_gpus = 0;
  int peak_queued_jobs = 0;
  std::optional<ReplayCost> cost;  // as the replay priced it
};

ReplayMetrics ComputeReplayMetrics(const std::vector<TraceJob>& jobs, const ReplayResult& result,
                                   int cluster_gpus);

// Pods of an openb trace the replay left out (openb_jobs.h): those that
// asked for no GPUs and those never scheduled.
struct ReplayLeftOut {
  int64_t without_gpus = 0;
  int64_t never_scheduled = 0;
};

// What the run was, for metrics.json beside the numbers.
struct ReplayIdentity {
  std::string trace;  // the file's name, without its directory
  std::string policy;
  int gpus = 0;
  int gpus_per_node = 8;
  uint64_t seed = 0;
  int64_t skipped_rows = 0;
  int64_t gangs_started = 0;
  std::optional<ReplayLeftOut> left_out = std::nullopt;  // openb only
  // Several models: jobs that no node of a priced model could run.
  std::optional<int64_t> left_out_without_a_node = std::nullopt;
  bool cost_aware = true;
};

// metrics.json: {"trace", "policy", "gpus", "gpus_per_node", "seed", "jobs",
// "skipped_rows", ["left_out_without_gpus", "left_out_never_scheduled": only
// with id.left_out], "makespan_s", "mean_jct_s", "median_jct_s", "p99_jct_s",
// "mean_queue_s", "median_queue_s", "p99_queue_s", "utilization", "gpu_seconds", "peak_busy_gpus",
// "peak_queued_jobs", "multi_node_gangs_started", ["left_out_without_a_node",
// "cost_aware", "cost": {"currency", "gpu_hour_cost", "work_a100_hours",
// "cost_per_a100_hour", "gpu_hours_by_model", "unpriced_jobs"}: only for a
// priced cluster of several models]} (docs/simulator.md).
nlohmann::ordered_json ReplayMetricsJson(const ReplayIdentity& id, const ReplayMetrics& m);

}  // namespace gleaner::sim
