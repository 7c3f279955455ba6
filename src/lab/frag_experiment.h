#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "sched/frag_cluster.h"

namespace gleaner::lab {

// The FGD paper's fragmentation experiment (Weng et al., ATC'23, and their
// kubernetes-scheduler-simulator): pods arrive one at a time and never
// leave; each is placed by the policy or dropped; the curve is the share of
// the cluster's GPUs allocated as a function of the GPU load arrived.
// docs/fragmentation.md describes the method and where ours differs.
struct FragExperimentConfig {
  std::string policy = "gleaner";  // see MakeFragPolicy
  double tune = 1.3;               // arrive until requests reach tune x cluster GPUs
  uint64_t seed = 42;              // arrival order, clones and node tie order
};

struct FragCurve {
  std::string policy;
  // allocation_pct[x]: mean GPU allocation ratio (%) over the pods after
  // whose arrival round(100 x arrived / capacity) == x; x = 0..tune*100.
  std::vector<double> allocation_pct;
  int64_t pods_arrived = 0;  // originals and clones
  int64_t clones = 0;
  int64_t pods_failed = 0;
  int64_t gpu_capacity_milli = 0;
  int64_t gpu_allocated_milli = 0;  // at the end
};

// The order pods arrive in, as indices into `pods`: a seeded permutation of
// all of them, then clones drawn uniformly with replacement while their GPU
// requests (num_gpu x gpu_milli) stay within tune x `capacity_milli`,
// stopping at the first that would overshoot. When the originals alone
// overshoot, the permutation is cut at the first pod that would.
std::vector<size_t> ArrivalOrder(const std::vector<sched::FragPodSpec>& pods,
                                 int64_t capacity_milli, double tune, uint64_t seed);

// Runs the experiment. InvalidArgument for an unknown policy, a tune
// outside (0, 10], a cluster without GPUs or a pod that asks for more than
// one node could ever hold (more than 8 GPUs, a share above 1000).
core::Result<FragCurve> RunFragExperiment(const std::vector<sched::FragNodeSpec>& nodes,
                                          const std::vector<sched::FragPodSpec>& pods,
                                          const FragExperimentConfig& config);

}  // namespace gleaner::lab
