#pragma once

#include <cstdint>
#include <vector>

#include "sched/frag_cluster.h"
#include "sched/frag_measure.h"

namespace gleaner::sched {

// gleaner's placement score, one definition for the fragmentation
// experiment's policy (FragPolicy "gleaner") and the live scheduler's
// scorer (FragmentationAwareScorer). It ranks a node for a pod by, in
// order (docs/fragmentation.md has the measurements behind each):
//  1. Model pressure: a pod that may run on several GPU models avoids a
//     model its pinned pods alone oversubscribe (OversubscribedModels).
//  2. FGD's integer score of the drop in the node's fragmentation, over the
//     workload's typical shapes and every multi-GPU shape (a rare 8-GPU pod
//     is what a cluster most often turns away).
//  3. For a GPU pod, the smallest growth of the node's CPU shortage: GPUs
//     left without the CPUs the workload's GPU pods ask per GPU.

// What the score knows of the workload it places: learned from the pods of
// the experiment, or the jobs the live scheduler sees.
struct WorkloadProfile {
  std::vector<TypicalShape> shapes;
  // GPU pods' CPU per milli-GPU (pods without GPUs not counted: they may
  // run on any node, so they do not say what a GPU needs).
  double cpu_per_gpu_milli = 0;
  // Per model id: the share of all GPU requests pinned to that model (a pod
  // allowed several of the present models, not all, split evenly).
  std::vector<double> pinned_share;
};

// `model_gpus[m]`: GPUs of model id m in the cluster (absent models take
// no pinned share; ids past 31, which masks cannot name, neither).
WorkloadProfile ProfileWorkload(const std::vector<FragPod>& pods,
                                const std::vector<int64_t>& model_gpus);

// The node's free milli-GPU, in milli-CPU at the profile's ratio, that its
// free CPU falls short of: GPUs that will sit idle for want of CPU.
double CpuShortage(const FragNodeState& node, double cpu_per_gpu_milli);

// Per model id: whether the share of requests pinned to it is at least its
// share of the free GPUs now (`free_milli[m]`): then what is free there is
// wanted by pods that can go nowhere else.
std::vector<bool> OversubscribedModels(const WorkloadProfile& profile,
                                       const std::vector<int64_t>& free_milli);

// GleanerScore::avoid_model: -1 for a GPU pod on an oversubscribed model.
// A pod pinned to one model sees the same value on every candidate, so
// this steers only pods that have a choice.
int AvoidModel(const FragPod& pod, bool oversubscribed);

// The FGD authors' integer score of a fragmentation drop: 100 x sigmoid(drop / 1000), truncated.
int FgdIntegerScore(double drop_milli);

// The score of placing `pod` on `before` with `gpu_mask`, compared
// lexicographically (higher is better). `oversubscribed`: the node's model
// is (OversubscribedModels); `meter` measures fragmentation over the
// profile's shapes.
struct GleanerScore {
  int avoid_model = 0;  // -1: the pod could go elsewhere and this model is oversubscribed
  int fgd = 0;          // FgdIntegerScore of the drop
  double shortage_drop = 0;
  friend bool operator>(const GleanerScore& a, const GleanerScore& b);
  friend bool operator==(const GleanerScore& a, const GleanerScore& b) = default;
};
GleanerScore ScorePlacement(const FragNodeState& before, const FragPod& pod, uint8_t gpu_mask,
                            double fragmentation_before, const FragmentationMeter& meter,
                            const WorkloadProfile& profile, bool oversubscribed);

}  // namespace gleaner::sched
