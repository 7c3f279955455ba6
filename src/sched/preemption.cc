#include "sched/preemption.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace gleaner::sched {
namespace {

// Whether the job fits on node `n` once the chosen victims have left.
bool FitsAfter(const ClusterState& cluster, const JobRequest& job,
               const std::vector<ClassId>& allowed, NodeIndex n,
               const std::vector<EvictableJob>& evictable, const std::vector<bool>& chosen) {
  std::map<GpuIndex, int> freed;
  for (size_t i = 0; i < evictable.size(); ++i) {
    if (!chosen[i]) continue;
    for (GpuIndex g : evictable[i].gpus) freed[g] += evictable[i].milli_per_gpu;
  }
  std::map<ClassId, int> whole;
  for (GpuIndex gi : cluster.node(n).gpus) {
    const GpuState& g = cluster.gpu(gi);
    if (!g.spec.lendable ||
        std::find(allowed.begin(), allowed.end(), g.gpu_class) == allowed.end()) {
      continue;
    }
    auto f = freed.find(gi);
    const int free = g.free_milli + (f == freed.end() ? 0 : f->second);
    if (job.fractional() && free >= job.gpu_milli) return true;
    if (free >= kMilliPerGpu && ++whole[g.gpu_class] >= job.gpus) return true;
  }
  return false;
}

}  // namespace

std::optional<NodeEviction> PlanEvictionOnNode(const ClusterState& cluster, const JobRequest& job,
                                               const std::vector<ClassId>& allowed, NodeIndex n,
                                               std::vector<EvictableJob> evictable) {
  std::sort(evictable.begin(), evictable.end(), [](const EvictableJob& a, const EvictableJob& b) {
    return std::tie(a.cost, a.job) < std::tie(b.cost, b.job);
  });
  std::vector<bool> chosen(evictable.size(), false);
  bool fits = FitsAfter(cluster, job, allowed, n, evictable, chosen);
  for (size_t i = 0; i < evictable.size() && !fits; ++i) {
    chosen[i] = true;
    fits = FitsAfter(cluster, job, allowed, n, evictable, chosen);
  }
  if (!fits) return std::nullopt;
  // Cheapest-first can pick a small victim that a larger one later made
  // unnecessary: drop whatever the job can do without.
  for (size_t i = evictable.size(); i-- > 0;) {
    if (!chosen[i]) continue;
    chosen[i] = false;
    if (!FitsAfter(cluster, job, allowed, n, evictable, chosen)) chosen[i] = true;
  }
  NodeEviction out;
  out.node = n;
  for (size_t i = 0; i < evictable.size(); ++i) {
    if (!chosen[i]) continue;
    out.victims.push_back(evictable[i].job);
    out.cost += evictable[i].cost;
  }
  return out;
}

}  // namespace gleaner::sched
