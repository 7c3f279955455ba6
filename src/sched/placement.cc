#include "sched/placement.h"

#include <algorithm>
#include <tuple>

#include "sched/gang_placement.h"
#include "sched/gpu_choice.h"
#include "sched/window_fit.h"

namespace gleaner::sched {
namespace {

struct Scored {
  Placement placement;
  int gpu_free_milli = 1000;
  WindowFit fit;  // before packing: an owner's return costs the job its work
  auto Rank() const {
    return std::tuple(fit, placement.cost, gpu_free_milli, placement.node, placement.gpus.front());
  }
};

void Consider(std::optional<Scored>* best, Scored s) {
  if (!*best || s.Rank() < (*best)->Rank()) *best = std::move(s);
}

// Host CPU a node that does not report it is never short of.
constexpr int64_t kUnreportedCpu = int64_t{1} << 40;

// Node `n` as the fragmentation score sees it: its GPUs of the chosen
// GPUs' class (the chosen first, then by index, at most 8; a GPU that may
// not be lent counts as full) and its free CPU; `c->gpu_mask`, the chosen.
void DescribeNode(const ClusterState& cluster, NodeIndex n, const std::vector<GpuIndex>& chosen,
                  const JobRequest& job, PlacementCandidate* c) {
  const ClassId cls = cluster.gpu(chosen.front()).gpu_class;
  if (chosen.size() > static_cast<size_t>(kFragMaxGpusPerNode) || cls >= 32) return;
  const NodeState& node = cluster.node(n);
  FragNodeState& view = c->node;
  view.model = static_cast<int>(cls);
  view.cpu_free = node.capacity.cpu_milli > 0 ? node.free_cpu_milli : kUnreportedCpu;
  const auto add = [&](GpuIndex g, bool taken) {
    const GpuState& gpu = cluster.gpu(g);
    const auto i = static_cast<size_t>(view.gpus++);
    // Clamped: a job taken back after a restart may leave a GPU over-given.
    view.gpu_free[i] = gpu.spec.lendable ? std::clamp(gpu.free_milli, 0, kMilliPerGpu) : 0;
    if (taken) c->gpu_mask = static_cast<uint8_t>(c->gpu_mask | 1u << i);
  };
  for (GpuIndex g : chosen) add(g, true);
  for (GpuIndex g : node.gpus) {
    if (view.gpus == kFragMaxGpusPerNode) break;
    if (cluster.gpu(g).gpu_class != cls ||
        std::find(chosen.begin(), chosen.end(), g) != chosen.end()) {
      continue;
    }
    add(g, false);
  }
  c->pod.cpu_milli = job.cpu_milli;
  c->pod.num_gpu = job.gpus;
  c->pod.gpu_milli = job.gpu_milli;
}

Scored Score(const ClusterState& cluster, const JobRequest& job, const PlacementScorer& scorer,
             NodeIndex n, const GpuChoice& choice, int gpu_free_milli) {
  PlacementCandidate c;
  if (scorer.LearnsWorkload()) DescribeNode(cluster, n, choice.gpus, job, &c);
  c.gpus = job.gpus;
  c.milli_per_gpu = job.gpu_milli;
  c.node_gpus = static_cast<int>(cluster.node(n).gpus.size());
  c.node_free_milli = cluster.FreeMilliOnNode(n);
  c.gpu_free_milli = gpu_free_milli;
  c.within_one_island = choice.within_one_island;
  c.islands_broken = choice.islands_broken;
  return {{n, choice.gpus, job.gpu_milli, scorer.Cost(c)},
          gpu_free_milli,
          FitGpus(cluster, choice.gpus, job.runtime_guess)};
}

// The chosen placement, with why its window fits (said once, not for
// every candidate scored).
std::optional<Placement> Chosen(const ClusterState& cluster, const JobRequest& job,
                                std::optional<Scored> best) {
  if (!best) return std::nullopt;
  best->placement.why =
      DescribeWindowFit(cluster, best->placement.gpus, job.runtime_guess, job.runtime_basis);
  return std::move(best->placement);
}

int LargestFreeAmong(const ClusterState& cluster, const std::vector<ClassId>& allowed) {
  int largest = 0;
  for (ClassId c : allowed) largest = std::max(largest, cluster.LargestFree(c));
  return largest;
}

}  // namespace

bool ClassAllowed(const GpuClass& c, const JobRequest& job) {
  if (c.memory < job.min_gpu_memory) return false;
  // Beside a holder only a job that said how much memory it uses, and fits.
  if (c.lend_memory.count() > 0 &&
      (job.gpu_memory.count() == 0 || job.gpu_memory > c.lend_memory)) {
    return false;
  }
  if (job.gpu_models.empty()) return true;
  return std::any_of(job.gpu_models.begin(), job.gpu_models.end(), [&](const std::string& m) {
    return !m.empty() && c.model.find(m) != std::string::npos;
  });
}

std::vector<ClassId> AllowedClasses(const ClusterState& cluster, const JobRequest& job) {
  std::vector<ClassId> out;
  for (ClassId c = 0; c < cluster.class_count(); ++c) {
    if (ClassAllowed(cluster.gpu_class(c), job)) out.push_back(c);
  }
  return out;
}

std::optional<Placement> FindPlacement(const ClusterState& cluster, const JobRequest& job,
                                       const std::vector<ClassId>& allowed,
                                       const PlacementScorer& scorer, int candidate_limit,
                                       const GpuFilter* may_take) {
  std::optional<Scored> best;
  if (job.fractional()) {
    // Shared GPUs with room, tightest first.
    for (ClassId c : allowed) {
      const auto& shared = cluster.PartialGpus(c);
      int taken = 0;
      for (auto it = shared.lower_bound({job.gpu_milli, 0});
           it != shared.end() && taken < candidate_limit; ++it, ++taken) {
        const GpuIndex g = it->second;
        if ((may_take && !(*may_take)(g)) || !cluster.HasHostRoom(cluster.gpu(g).node, job)) {
          --taken;
          continue;
        }
        GpuChoice one{{g}, true, 0};
        Consider(&best, Score(cluster, job, scorer, cluster.gpu(g).node, one, it->first));
      }
    }
  }
  // Nodes with whole free GPUs, fewest free first (a fraction takes one).
  const int need = job.fractional() ? 1 : job.gpus;
  const int largest = LargestFreeAmong(cluster, allowed);
  int taken = 0;
  for (int count = need; count <= largest && taken < candidate_limit; ++count) {
    for (ClassId c : allowed) {
      for (NodeIndex n : cluster.NodesWithFree(c, count)) {
        if (taken >= candidate_limit) break;
        if (!cluster.HasHostRoom(n, job)) continue;
        std::optional<GpuChoice> choice =
            ChooseGpus(cluster, n, c, need, may_take, job.runtime_guess);
        if (!choice) continue;
        ++taken;
        Consider(&best, Score(cluster, job, scorer, n, *choice, 1000));
      }
    }
  }
  return Chosen(cluster, job, std::move(best));
}

std::optional<Placement> FindPlacementOnNodes(const ClusterState& cluster, const JobRequest& job,
                                              const std::vector<ClassId>& allowed,
                                              const PlacementScorer& scorer,
                                              const std::vector<NodeIndex>& nodes,
                                              const GpuFilter& may_take) {
  std::optional<Scored> best;
  const int need = job.fractional() ? 1 : job.gpus;
  for (NodeIndex n : nodes) {
    if (!cluster.node(n).alive || !cluster.HasHostRoom(n, job)) continue;
    if (job.fractional()) {
      for (GpuIndex g : cluster.node(n).gpus) {
        const GpuState& gpu = cluster.gpu(g);
        if (!gpu.spec.lendable || gpu.free_milli < job.gpu_milli ||
            gpu.free_milli == kMilliPerGpu || !may_take(g) ||
            std::find(allowed.begin(), allowed.end(), gpu.gpu_class) == allowed.end()) {
          continue;
        }
        GpuChoice one{{g}, true, 0};
        Consider(&best, Score(cluster, job, scorer, n, one, gpu.free_milli));
      }
    }
    for (ClassId c : allowed) {
      std::optional<GpuChoice> choice =
          ChooseGpus(cluster, n, c, need, &may_take, job.runtime_guess);
      if (choice) Consider(&best, Score(cluster, job, scorer, n, *choice, kMilliPerGpu));
    }
  }
  return Chosen(cluster, job, std::move(best));
}

NoFit DescribeNoFit(const ClusterState& cluster, const JobRequest& job,
                    const std::vector<ClassId>& allowed) {
  NoFit out;
  out.largest_free = LargestFreeAmong(cluster, allowed);
  if (out.largest_free > 0) {
    for (ClassId c : allowed) {
      const auto& nodes = cluster.NodesWithFree(c, out.largest_free);
      if (!nodes.empty() && (!out.node || *nodes.begin() < *out.node)) out.node = *nodes.begin();
    }
  }
  if (job.spans_nodes()) out.nodes_with_room = NodesWithRoom(cluster, job, allowed);
  if (job.asks_host()) {
    // Of the first nodes whose GPUs would do but whose CPUs or memory are
    // claimed, the one with the most CPUs left, then memory: the nearest
    // miss. Bounded: a pass judges every waiting job.
    constexpr int kLooked = 64;
    const int need = job.fractional() ? 1 : job.gpus;
    int looked = 0;
    const auto nearer = [&](NodeIndex n) {
      const NodeState& a = cluster.node(n);
      const NodeState& b = cluster.node(*out.short_of_host);
      return std::tie(a.free_cpu_milli, a.free_memory) > std::tie(b.free_cpu_milli, b.free_memory);
    };
    for (ClassId c : allowed) {
      for (int count = need; count <= cluster.LargestFree(c) && looked < kLooked; ++count) {
        for (NodeIndex n : cluster.NodesWithFree(c, count)) {
          if (++looked > kLooked) break;
          if (!cluster.HasHostRoom(n, job) && (!out.short_of_host || nearer(n))) {
            out.short_of_host = n;
          }
        }
      }
    }
  }
  if (job.fractional()) {
    for (ClassId c : allowed) {
      const auto& shared = cluster.PartialGpus(c);
      if (!shared.empty())
        out.largest_share_milli = std::max(out.largest_share_milli, shared.rbegin()->first);
    }
  }
  return out;
}

}  // namespace gleaner::sched
