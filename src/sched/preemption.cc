#include "sched/preemption.h"

#include <algorithm>
#include <tuple>

namespace gleaner::sched {
namespace {

// The node's GPUs as the planner needs them: what is free on each now and
// what the chosen victims would free, by position on the node. Decisions
// at 90 % full look at dozens of nodes, so nothing here allocates per check.
class NodeLedger {
 public:
  NodeLedger(const ClusterState& cluster, const JobRequest& job,
             const std::vector<ClassId>& allowed, NodeIndex n, const GpuFilter* may_take)
      : cluster_(cluster),
        job_(job),
        gpus_(cluster.node(n).gpus),
        host_ok_(cluster.HasHostRoom(n, job)),
        capacity_(cluster.node(n).capacity),
        free_cpu_milli_(cluster.node(n).free_cpu_milli),
        free_memory_(cluster.node(n).free_memory) {
    usable_.resize(gpus_.size());
    free_.resize(gpus_.size());
    for (size_t i = 0; i < gpus_.size(); ++i) {
      const GpuState& g = cluster.gpu(gpus_[i]);
      usable_[i] = g.spec.lendable &&
                   std::find(allowed.begin(), allowed.end(), g.gpu_class) != allowed.end() &&
                   (!may_take || (*may_take)(gpus_[i]));
      free_[i] = g.free_milli;
    }
  }

  // Adds (sign +1) or takes back (-1) what a victim frees.
  void Apply(const EvictableJob& v, int sign) {
    for (GpuIndex g : v.gpus) {
      const auto pos = std::find(gpus_.begin(), gpus_.end(), g) - gpus_.begin();
      free_[static_cast<size_t>(pos)] += sign * v.milli_per_gpu;
    }
    free_cpu_milli_ += sign * v.cpu_milli;
    free_memory_ += sign * static_cast<int64_t>(v.memory.count());
  }

  bool Fits() const { return HostFits() && GpusFit(); }

 private:
  // As ClusterState::HasHostRoom, with what the chosen victims free.
  bool HostFits() const {
    return host_ok_ || sched::HostFits(capacity_, free_cpu_milli_, free_memory_, job_);
  }

  bool GpusFit() const {
    // A gang takes GPUs of one class: count whole free GPUs per class.
    for (size_t i = 0; i < gpus_.size(); ++i) {
      if (!usable_[i]) continue;
      if (job_.fractional()) {
        if (free_[i] >= job_.gpu_milli) return true;
        continue;
      }
      if (free_[i] < kMilliPerGpu) continue;
      const ClassId c = cluster_.gpu(gpus_[i]).gpu_class;
      int whole = 0;
      for (size_t k = 0; k < gpus_.size(); ++k) {
        if (usable_[k] && free_[k] >= kMilliPerGpu && cluster_.gpu(gpus_[k]).gpu_class == c) {
          ++whole;
        }
      }
      if (whole >= job_.gpus) return true;
    }
    return false;
  }

  const ClusterState& cluster_;
  const JobRequest& job_;
  const std::vector<GpuIndex>& gpus_;
  const bool host_ok_;  // room without any victim: the common case, checked once
  const HostResources capacity_;
  int64_t free_cpu_milli_;
  int64_t free_memory_;
  std::vector<bool> usable_;
  std::vector<int> free_;
};

}  // namespace

std::optional<NodeEviction> PlanEvictionOnNode(const ClusterState& cluster, const JobRequest& job,
                                               const std::vector<ClassId>& allowed, NodeIndex n,
                                               std::vector<EvictableJob> evictable,
                                               const GpuFilter* may_take) {
  NodeLedger ledger(cluster, job, allowed, n, may_take);
  // Quick refusal: even all of them are not enough.
  for (const EvictableJob& v : evictable) ledger.Apply(v, +1);
  if (!ledger.Fits()) return std::nullopt;
  for (const EvictableJob& v : evictable) ledger.Apply(v, -1);

  std::sort(evictable.begin(), evictable.end(), [](const EvictableJob& a, const EvictableJob& b) {
    return std::tie(a.cost, a.job) < std::tie(b.cost, b.job);
  });
  std::vector<bool> chosen(evictable.size(), false);
  bool fits = ledger.Fits();
  for (size_t i = 0; i < evictable.size() && !fits; ++i) {
    chosen[i] = true;
    ledger.Apply(evictable[i], +1);
    fits = ledger.Fits();
  }
  // Cheapest-first can pick a small victim that a larger one later made
  // unnecessary: drop whatever the job can do without, dearest first.
  for (size_t i = evictable.size(); i-- > 0;) {
    if (!chosen[i]) continue;
    ledger.Apply(evictable[i], -1);
    if (ledger.Fits()) {
      chosen[i] = false;
    } else {
      ledger.Apply(evictable[i], +1);
    }
  }
  NodeEviction out;
  out.node = n;
  for (size_t i = 0; i < evictable.size(); ++i) {
    if (!chosen[i]) continue;
    out.cost += evictable[i].cost;
    if (!evictable[i].shrink) out.victims.push_back(evictable[i].job);
  }
  for (size_t i = 0; i < evictable.size(); ++i) {
    if (!chosen[i] || !evictable[i].shrink) continue;
    const JobId id = evictable[i].job;
    if (std::find(out.victims.begin(), out.victims.end(), id) != out.victims.end()) continue;
    auto it = std::find_if(out.shrinks.begin(), out.shrinks.end(),
                           [id](const auto& s) { return s.first == id; });
    if (it == out.shrinks.end()) it = out.shrinks.insert(out.shrinks.end(), {id, {}});
    it->second.insert(it->second.end(), evictable[i].gpus.begin(), evictable[i].gpus.end());
  }
  return out;
}

}  // namespace gleaner::sched
