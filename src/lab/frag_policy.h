#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sched/frag_cluster.h"

namespace gleaner::lab {

// Policy: where one pod of the fragmentation experiment goes, given what is
// free now. Pods are placed one at a time and never retried or moved.
// The experiment searches every node; the live scheduler's search
// (placement.h) gives its PlacementScorer a few candidates instead, and
// the gleaner scorer scores them with the same sched::ScorePlacement
// (frag_score.h). Implementations are deterministic for a seed; not
// thread-safe (they keep a memo or a generator).
class FragPolicy {
 public:
  virtual ~FragPolicy() = default;
  // A node that fits and the GPUs taken there; nullopt when none fits.
  virtual std::optional<sched::FragPlacement> Place(const sched::FragPod& pod,
                                                    const sched::FragCluster& cluster) = 0;
  virtual std::string_view Name() const = 0;
};

// The policy names MakeFragPolicy knows, for help texts and errors.
inline constexpr std::string_view kFragPolicyNames = "random, bestfit, fgd, gleaner";

// "random": a fitting node drawn uniformly, a fitting GPU drawn uniformly.
// "bestfit": the FGD paper's BestFit, the authors' integer score (0..100) of
//   1 - [0.5 (free CPU - request)/128,000 + 0.5 (free GPU milli - request)/8,000],
//   the tightest-fitting GPUs.
// "fgd": the FGD paper's score, the authors' integer 100 * sigmoid(drop in
//   the node's fragmentation / 1000); a fractional pod takes the GPU that
//   scores best.
// "gleaner": sched::ScorePlacement (frag_score.h): keep off models pinned pods
//   oversubscribe, then FGD's integer score over the typical and every
//   multi-GPU shape, then the least CPU shortage for GPU pods.
// Ties between nodes: a seeded random order of the nodes fixed for the
// whole run. `workload` (the resolved pods of the workload) gives FGD and
// gleaner their typical shapes. InvalidArgument for another name.
core::Result<std::unique_ptr<FragPolicy>> MakeFragPolicy(
    std::string_view name, const sched::FragCluster& cluster,
    const std::vector<sched::FragPod>& workload, uint64_t seed);

// The parts of the scores, exposed so tests can work them by hand.
// BestFit's score before rounding (higher is better).
double BestFitScore(const sched::FragNodeState& node, const sched::FragPod& pod);
// 1 / (1 + e^-x).
double Sigmoid(double x);

}  // namespace gleaner::lab
