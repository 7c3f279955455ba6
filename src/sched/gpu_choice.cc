#include "sched/gpu_choice.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "sched/job_request.h"
#include "sched/window_fit.h"

namespace gleaner::sched {
namespace {

struct Island {
  int key = 0;
  int size = 0;  // GPUs of the island on the node, whatever their state
  std::vector<GpuIndex> free;
  WindowFit best;  // of its best-fitting free GPU
  bool intact() const { return static_cast<int>(free.size()) == size; }
};

}  // namespace

std::optional<GpuChoice> ChooseGpus(const ClusterState& cluster, NodeIndex n, ClassId c, int count,
                                    const GpuFilter* may_take, core::Duration runtime) {
  if (count < 1 || cluster.FreeWhole(n, c) < count) return std::nullopt;
  // A GPU without NVLink is an island of its own, keyed below every real
  // island and in the node's order.
  constexpr int kPcieKeyBase = -1'000'000;
  std::map<int, Island> by_key;
  const std::vector<GpuIndex>& gpus = cluster.node(n).gpus;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const GpuState& g = cluster.gpu(gpus[i]);
    const int key =
        g.spec.nvlink_island >= 0 ? g.spec.nvlink_island : kPcieKeyBase + static_cast<int>(i);
    Island& island = by_key[key];
    island.key = key;
    ++island.size;
    if (g.gpu_class == c && g.spec.lendable && g.free_milli == kMilliPerGpu &&
        (!may_take || (*may_take)(gpus[i]))) {
      island.free.push_back(gpus[i]);
    }
  }
  std::vector<Island> islands;
  int usable = 0;
  const auto fit = [&](GpuIndex g) { return FitGpus(cluster, {g}, runtime); };
  for (auto& [key, island] : by_key) {
    usable += static_cast<int>(island.free.size());
    if (island.free.empty()) continue;
    if (runtime.count() > 0) {
      std::stable_sort(island.free.begin(), island.free.end(),
                       [&](GpuIndex a, GpuIndex b) { return fit(a) < fit(b); });
      island.best = fit(island.free.front());
    }
    islands.push_back(std::move(island));
  }
  if (usable < count) return std::nullopt;  // the filter kept too many back
  const auto tightest_first = [](const Island& a, const Island& b) {
    return std::tuple(a.free.size(), a.intact(), a.best, a.key) <
           std::tuple(b.free.size(), b.intact(), b.best, b.key);
  };
  std::sort(islands.begin(), islands.end(), tightest_first);

  GpuChoice choice;
  const auto take = [&](const Island& island, int k) {
    if (island.intact() && k < static_cast<int>(island.free.size())) ++choice.islands_broken;
    choice.gpus.insert(choice.gpus.end(), island.free.begin(), island.free.begin() + k);
  };
  for (const Island& island : islands) {
    if (static_cast<int>(island.free.size()) >= count) {
      take(island, count);
      choice.within_one_island = count == 1 || island.key >= 0;
      std::sort(choice.gpus.begin(), choice.gpus.end());
      return choice;
    }
  }
  // No island holds the gang: whole islands, largest first, then the rest
  // from the tightest island that holds it.
  choice.within_one_island = false;
  int left = count;
  std::vector<size_t> largest_first(islands.size());
  for (size_t i = 0; i < islands.size(); ++i) largest_first[i] = i;
  std::stable_sort(largest_first.begin(), largest_first.end(), [&](size_t a, size_t b) {
    return islands[a].free.size() > islands[b].free.size();
  });
  std::vector<bool> used(islands.size(), false);
  for (size_t i : largest_first) {
    const int free = static_cast<int>(islands[i].free.size());
    if (left > 0 && free <= left) {
      take(islands[i], free);
      used[i] = true;
      left -= free;
    }
  }
  for (size_t i = 0; i < islands.size() && left > 0; ++i) {
    if (used[i] || static_cast<int>(islands[i].free.size()) < left) continue;
    take(islands[i], left);
    left = 0;
  }
  if (left > 0) return std::nullopt;  // the filter left too few
  std::sort(choice.gpus.begin(), choice.gpus.end());
  return choice;
}

}  // namespace gleaner::sched
