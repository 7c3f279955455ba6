#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sched/frag_cluster.h"

namespace gleaner::sched {

// One request shape of the workload and its share of all pods.
struct TypicalShape {
  FragPod pod;
  double weight = 0;  // the shapes' weights sum to 1
};

// The most common request shapes (CPU, GPU count, share of each GPU, model
// constraint), most common first, taken until they cover `coverage` of the
// pods (the FGD authors' popularity threshold: 0.95), their weights then
// renormalised to sum to 1. Pods without GPUs count too, as the authors'
// simulator counts them. Ties in frequency: the larger shape first. With
// `every_multi_gpu`, every shape of two or more GPUs is kept too, however
// rare (weights renormalised over all that are kept).
std::vector<TypicalShape> TypicalShapes(const std::vector<FragPod>& pods, double coverage = 0.95,
                                        bool every_multi_gpu = false);

// The FGD paper's fragmentation of one node, in milli-GPU: for each typical
// shape, the node's free milli-GPU that shape could not use, weighted by the
// shape's frequency. A shape that fits (CPU, model and GPUs) cannot use the
// GPUs with less free than its share; one that does not fit, or needs no
// GPU, cannot use any of it. Memory is not considered (as in the authors'
// code).
double NodeFragmentation(const FragNodeState& node, const std::vector<TypicalShape>& shapes);

// NodeFragmentation with a memo: the value depends only on the node's model,
// which shapes its free CPU can serve and its multiset of free GPU shares,
// and nodes repeat those a great deal. Not thread-safe (the memo is
// mutable even through const).
class FragmentationMeter {
 public:
  explicit FragmentationMeter(std::vector<TypicalShape> shapes);

  double Of(const FragNodeState& node) const;
  const std::vector<TypicalShape>& shapes() const { return shapes_; }

 private:
  struct KeyHash {
    size_t operator()(const std::pair<uint64_t, uint64_t>& k) const {
      return static_cast<size_t>(k.first * 0x9E3779B97F4A7C15ull ^ (k.second + (k.first >> 29)));
    }
  };
  static constexpr size_t kMaxMemo = size_t{1} << 20;
  std::vector<TypicalShape> shapes_;
  std::vector<int64_t> cpu_thresholds_;  // distinct CPU requests of the shapes, ascending
  mutable std::unordered_map<std::pair<uint64_t, uint64_t>, double, KeyHash> memo_;
};

}  // namespace gleaner::sched
