#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "sched/action.h"
#include "sched/cluster_state.h"
#include "sched/job_request.h"

namespace gleaner::sched::testing {

// Scenario times: At(s) is s seconds after a fixed start.
inline const core::TimePoint kT0 = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);
inline core::TimePoint At(int s) { return kT0 + core::Seconds(s); }

// What a Handle call decided, a line per action (or its error), for
// ElementsAre.
inline std::vector<std::string> Lines(const core::Result<std::vector<Action>>& r) {
  if (!r.ok()) return {"error: " + r.status().ToString()};
  std::vector<std::string> out;
  for (const Action& a : *r) out.push_back(ToString(a));
  return out;
}

// A node named `id` with `count` GPUs GPU-<id>-<i>; `islands` lists NVLink
// islands by GPU index (empty: PCIe only).
inline NodeSpec MakeNode(const std::string& id, int count,
                         const std::vector<std::vector<int>>& islands = {},
                         const std::string& model = "NVIDIA A100-SXM4-80GB", uint64_t gib = 80) {
  NodeSpec n{core::NodeId(id), {}};
  for (int i = 0; i < count; ++i) {
    n.gpus.push_back({core::GpuUuid("GPU-" + id + "-" + std::to_string(i)),
                      i,
                      model,
                      core::Bytes::GiB(gib),
                      -1,
                      true,
                      {}});
  }
  for (size_t island = 0; island < islands.size(); ++island) {
    for (int i : islands[island])
      n.gpus[static_cast<size_t>(i)].nvlink_island = static_cast<int>(island);
  }
  return n;
}

// MakeNode's node whose host reports `cpus` CPUs and `gib` GiB of memory.
inline NodeSpec MakeHostNode(const std::string& id, int gpus, int cpus, uint64_t gib = 0) {
  NodeSpec n = MakeNode(id, gpus);
  n.host = {int64_t{cpus} * 1000, core::Bytes::GiB(gib)};
  return n;
}

inline JobRequest MakeJob(JobId id, int gpus, int milli = 1000) {
  JobRequest j;
  j.id = id;
  j.gpus = gpus;
  j.gpu_milli = milli;
  return j;
}

// The NVML indices of `gpus` on their node.
inline std::vector<int> Indices(const ClusterState& c, const std::vector<GpuIndex>& gpus) {
  std::vector<int> out;
  for (GpuIndex g : gpus) out.push_back(c.gpu(g).spec.index);
  return out;
}

}  // namespace gleaner::sched::testing
