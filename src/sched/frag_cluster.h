#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace gleaner::sched {

// The cluster model of the FGD paper's fragmentation experiment (Weng et al.,
// ATC'23): nodes with CPU, memory and up to 8 GPUs of one model, each GPU
// shareable in milli-GPU by fractional pods. ClusterState has no CPU or
// memory, which this experiment needs (a node out of CPU strands its GPUs),
// so the experiment keeps its own small model. Pure; thread-compatible.

inline constexpr int kFragMaxGpusPerNode = 8;

// A node as the openb node list describes it.
struct FragNodeSpec {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpus = 0;  // 0..8
  std::string model;
};

// A pod as the openb pod list describes it. Whole-GPU pods have gpu_milli
// 1000; a fractional pod has num_gpu 1 and gpu_milli below 1000; a CPU-only
// pod has num_gpu 0 and gpu_milli 0.
struct FragPodSpec {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int gpu_milli = 0;
  std::vector<std::string> gpu_models;  // allowed models; empty: any

  int64_t total_gpu_milli() const { return int64_t{num_gpu} * gpu_milli; }
  bool fractional() const { return num_gpu == 1 && gpu_milli < 1000; }
};

// A pod as the policies see it: the model constraint resolved to a bit mask
// over the cluster's model ids.
struct FragPod {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int gpu_milli = 0;
  uint32_t model_mask = ~0u;  // bit m: may run on model id m

  int64_t total_gpu_milli() const { return int64_t{num_gpu} * gpu_milli; }
  bool fractional() const { return num_gpu == 1 && gpu_milli < 1000; }
};

// What is free on one node now.
struct FragNodeState {
  int64_t cpu_free = 0;
  int64_t memory_free = 0;
  int64_t cpu_capacity = 0;
  int model = 0;  // id, see FragCluster::model_name
  int gpus = 0;
  // Free milli-GPU per GPU; slots at and beyond `gpus` stay 0.
  std::array<int, kFragMaxGpusPerNode> gpu_free{};

  int TotalGpuFree() const;
  // GPUs with at least `milli` free.
  int GpusWithFree(int milli) const;
  // CPU, memory, model and GPUs all fit (see FragCluster::Fits).
  bool Fits(const FragPod& pod) const;
};

// Where a pod goes: a node and the GPUs it takes (bit i: GPU i), each giving
// `pod.gpu_milli`.
struct FragPlacement {
  uint32_t node = 0;
  uint8_t gpu_mask = 0;
};

// The GPUs the authors' simulator gives a pod on a node that fits it: the
// tightest-fitting ones (least free first, lowest index among equals), so a
// whole-GPU pod takes the lowest-index wholly free GPUs.
uint8_t TightestGpus(const FragNodeState& node, const FragPod& pod);

// `node` after `pod` takes `gpu_mask` there.
FragNodeState AfterPlacing(const FragNodeState& node, const FragPod& pod, uint8_t gpu_mask);

class FragCluster {
 public:
  // InvalidArgument naming the node when one has more than 8 GPUs, a
  // negative capacity, or when there are more than 32 GPU models.
  static core::Result<FragCluster> Build(const std::vector<FragNodeSpec>& nodes);

  // Resolves the pod's model names; a name no node has matches nothing.
  FragPod Resolve(const FragPodSpec& spec) const;

  size_t size() const { return nodes_.size(); }
  const FragNodeState& node(uint32_t n) const { return nodes_[n]; }
  const std::string& model_name(int id) const { return models_[static_cast<size_t>(id)]; }
  int model_count() const { return static_cast<int>(models_.size()); }

  // Gives the pod its place. A placement that does not fit is a broken
  // invariant (aborts).
  void Apply(const FragPod& pod, const FragPlacement& p);

  // Changes each time a pod is placed on node `n`: lets a policy cache what
  // it computed about the node.
  uint64_t version(uint32_t n) const { return versions_[n]; }

  int64_t gpu_capacity_milli() const { return gpu_capacity_milli_; }
  int64_t gpu_allocated_milli() const { return gpu_allocated_milli_; }

 private:
  std::vector<FragNodeState> nodes_;
  std::vector<uint64_t> versions_;
  std::vector<std::string> models_;
  int64_t gpu_capacity_milli_ = 0;
  int64_t gpu_allocated_milli_ = 0;
};

}  // namespace gleaner::sched
