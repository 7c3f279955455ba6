#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/harvest.h"
#include "sim/replay_metrics.h"

namespace gleaner::sim {

// One policy's run of a harvest scenario, summed up. Hours are GPU-hours.
struct HarvestMetrics {
  std::string policy;
  bool checkpoints = false;
  // GPU-time jobs held lent GPUs, also while their owners computed beside
  // them (naive lending): it may exceed the physical limit.
  double harvested_gpu_hours = 0;
  // Of that, what they used while owners were away, and its share of the
  // physical limit (never above 1).
  double harvested_idle_gpu_hours = 0;
  double harvested_share_of_idle = 0;
  double useful_gpu_hours = 0;  // harvested less the work thrown away
  double lost_gpu_hours = 0;
  int64_t preemptions = 0;
  int64_t owner_returns = 0;
  double owner_delay_gpu_hours = 0;
  // Per owner return, the mean seconds the owner waited for the GPU.
  double owner_delay_per_return_s = 0;
  int64_t jobs_finished = 0;
  int64_t jobs_unfinished = 0;  // still queued or running when the timeline ended
  int64_t jobs_rejected = 0;
  Summary jct;    // finished jobs: end - submit
  Summary queue;  // jobs that started: first start - submit
  // Jain's index over users of (GPU-hours of finished work / GPU-hours
  // asked): 1 when every user got the same share of what they asked for;
  // absent with fewer than two users or when nobody's work finished.
  std::optional<double> jain_fairness;
  // Co-location and parking (docs/held-idle.md).
  double shared_gpu_hours = 0;  // of harvested: beside a holder
  double parked_gpu_hours = 0;  // of harvested: on a parked holder's GPU
  int64_t holder_oom_risk_minutes = 0;
  int64_t parks = 0;
  int64_t restores = 0;
  double restore_wait_mean_s = 0;  // per restore: the job's vacate, then the copy
  int64_t samples = 0;
};

HarvestMetrics ComputeHarvestMetrics(const std::string& policy, bool checkpoints,
                                     const std::vector<HarvestJob>& queue, const HarvestResult& r);

// What every run shares: the owner trace's physical limit.
struct HarvestLimit {
  double idle_gpu_hours = 0;
  double held_idle_gpu_hours = 0;
  double owner_busy_gpu_hours = 0;
  double no_data_gpu_hours = 0;
};
HarvestLimit LimitOf(const HarvestResult& r);

nlohmann::ordered_json HarvestMetricsJson(const HarvestMetrics& m);

}  // namespace gleaner::sim
