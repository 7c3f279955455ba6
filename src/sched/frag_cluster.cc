#include "sched/frag_cluster.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace gleaner::sched {

int FragNodeState::TotalGpuFree() const {
  int total = 0;
  for (int i = 0; i < gpus; ++i) total += gpu_free[static_cast<size_t>(i)];
  return total;
}

int FragNodeState::GpusWithFree(int milli) const {
  int count = 0;
  for (int i = 0; i < gpus; ++i) count += gpu_free[static_cast<size_t>(i)] >= milli ? 1 : 0;
  return count;
}

bool FragNodeState::Fits(const FragPod& pod) const {
  if (pod.cpu_milli > cpu_free || pod.memory_mib > memory_free) return false;
  if (pod.num_gpu == 0) return true;
  if ((pod.model_mask >> model & 1u) == 0) return false;
  return GpusWithFree(pod.gpu_milli) >= pod.num_gpu;
}

uint8_t TightestGpus(const FragNodeState& node, const FragPod& pod) {
  std::array<int, kFragMaxGpusPerNode> order{};
  int n = 0;
  for (int i = 0; i < node.gpus; ++i) {
    if (node.gpu_free[static_cast<size_t>(i)] >= pod.gpu_milli) order[static_cast<size_t>(n++)] = i;
  }
  // Stable: among equally free GPUs the lower index wins.
  std::stable_sort(order.begin(), order.begin() + n, [&](int a, int b) {
    return node.gpu_free[static_cast<size_t>(a)] < node.gpu_free[static_cast<size_t>(b)];
  });
  uint8_t mask = 0;
  for (int k = 0; k < pod.num_gpu && k < n; ++k) {
    mask = static_cast<uint8_t>(mask | 1u << order[static_cast<size_t>(k)]);
  }
  return mask;
}

FragNodeState AfterPlacing(const FragNodeState& node, const FragPod& pod, uint8_t gpu_mask) {
  FragNodeState after = node;
  after.cpu_free -= pod.cpu_milli;
  after.memory_free -= pod.memory_mib;
  for (int i = 0; i < node.gpus; ++i) {
    if ((gpu_mask >> i) & 1) after.gpu_free[static_cast<size_t>(i)] -= pod.gpu_milli;
  }
  return after;
}

core::Result<FragCluster> FragCluster::Build(const std::vector<FragNodeSpec>& nodes) {
  FragCluster c;
  for (const FragNodeSpec& spec : nodes) {
    if (spec.gpus < 0 || spec.gpus > kFragMaxGpusPerNode) {
      return core::InvalidArgument("node " + spec.name + " has " + std::to_string(spec.gpus) +
                                   " GPUs; the experiment models 0 to 8 per node");
    }
    if (spec.cpu_milli < 0 || spec.memory_mib < 0) {
      return core::InvalidArgument("node " + spec.name + " has a negative CPU or memory capacity");
    }
    FragNodeState s;
    s.cpu_free = s.cpu_capacity = spec.cpu_milli;
    s.memory_free = spec.memory_mib;
    s.gpus = spec.gpus;
    for (int i = 0; i < spec.gpus; ++i) s.gpu_free[static_cast<size_t>(i)] = 1000;
    auto it = std::find(c.models_.begin(), c.models_.end(), spec.model);
    if (it == c.models_.end()) {
      if (c.models_.size() == 32) {
        return core::InvalidArgument("more than 32 GPU models (at node " + spec.name +
                                     "); the experiment keeps model constraints in 32 bits");
      }
      c.models_.push_back(spec.model);
      it = c.models_.end() - 1;
    }
    s.model = static_cast<int>(it - c.models_.begin());
    c.gpu_capacity_milli_ += int64_t{spec.gpus} * 1000;
    c.nodes_.push_back(s);
    c.versions_.push_back(0);
  }
  return c;
}

FragPod FragCluster::Resolve(const FragPodSpec& spec) const {
  FragPod p;
  p.cpu_milli = spec.cpu_milli;
  p.memory_mib = spec.memory_mib;
  p.num_gpu = spec.num_gpu;
  p.gpu_milli = spec.num_gpu == 0 ? 0 : spec.gpu_milli;
  if (!spec.gpu_models.empty()) {
    p.model_mask = 0;
    for (const std::string& m : spec.gpu_models) {
      auto it = std::find(models_.begin(), models_.end(), m);
      if (it != models_.end()) p.model_mask |= 1u << (it - models_.begin());
    }
  }
  return p;
}

void FragCluster::Apply(const FragPod& pod, const FragPlacement& p) {
  FragNodeState& n = nodes_[p.node];
  if (!n.Fits(pod) || __builtin_popcount(p.gpu_mask) != pod.num_gpu) {
    std::fprintf(stderr, "FragCluster::Apply: the pod does not fit node %u as placed\n", p.node);
    std::abort();
  }
  for (int i = 0; i < n.gpus; ++i) {
    if ((p.gpu_mask >> i & 1u) && n.gpu_free[static_cast<size_t>(i)] < pod.gpu_milli) {
      std::fprintf(stderr, "FragCluster::Apply: GPU %d of node %u lacks room\n", i, p.node);
      std::abort();
    }
  }
  n = AfterPlacing(n, pod, p.gpu_mask);
  ++versions_[p.node];
  gpu_allocated_milli_ += pod.total_gpu_milli();
}

}  // namespace gleaner::sched
