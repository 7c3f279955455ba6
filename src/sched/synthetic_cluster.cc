#include "sched/synthetic_cluster.h"

#include <algorithm>

namespace gleaner::sched {

core::GpuUuid SyntheticGpuUuid(int node, int index) {
  return core::GpuUuid("GPU-" + std::to_string(node) + "-" + std::to_string(index));
}

NodeSpec SyntheticNode(int node, int gpus, bool lendable) {
  NodeSpec spec{core::NodeId("node-" + std::to_string(node)), {}};
  spec.gpus.reserve(static_cast<size_t>(gpus));
  for (int i = 0; i < gpus; ++i) {
    spec.gpus.push_back({SyntheticGpuUuid(node, i),
                         i,
                         "NVIDIA H100 80GB HBM3",
                         core::Bytes::GiB(80),
                         0,
                         lendable,
                         {}});
  }
  return spec;
}

JobRequest SyntheticJob(JobId id, int gpus, PriorityClass priority_class, int users) {
  JobRequest j;
  j.id = id;
  j.gpus = gpus;
  j.priority_class = priority_class;
  j.project = "p" + std::to_string(id % 7);
  j.user = "u" + std::to_string(id % std::max(users, 1));
  return j;
}

}  // namespace gleaner::sched
