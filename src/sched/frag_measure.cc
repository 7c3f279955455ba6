#include "sched/frag_measure.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace gleaner::sched {
namespace {

using ShapeKey = std::tuple<int64_t, int, int, uint32_t>;  // cpu, gpu_milli, num_gpu, models

ShapeKey KeyOf(const FragPod& p) { return {p.cpu_milli, p.gpu_milli, p.num_gpu, p.model_mask}; }

}  // namespace

std::vector<TypicalShape> TypicalShapes(const std::vector<FragPod>& pods, double coverage,
                                        bool every_multi_gpu) {
  std::map<ShapeKey, std::pair<int64_t, FragPod>> counts;
  for (const FragPod& p : pods) {
    auto [it, inserted] = counts.try_emplace(KeyOf(p), 0, p);
    ++it->second.first;
  }
  std::vector<std::pair<int64_t, FragPod>> ranked;
  for (const auto& [key, entry] : counts) ranked.push_back(entry);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return KeyOf(a.second) > KeyOf(b.second);
  });
  const double total = static_cast<double>(pods.size());
  std::vector<TypicalShape> out;
  double covered = 0;
  double kept = 0;
  for (const auto& [count, pod] : ranked) {
    const bool common = covered < coverage * total;
    covered += static_cast<double>(count);
    if (!common && !(every_multi_gpu && pod.num_gpu > 1)) continue;
    kept += static_cast<double>(count);
    out.push_back({pod, static_cast<double>(count)});
  }
  for (TypicalShape& s : out) s.weight /= kept;
  return out;
}

double NodeFragmentation(const FragNodeState& node, const std::vector<TypicalShape>& shapes) {
  const double free_total = node.TotalGpuFree();
  if (free_total == 0) return 0;
  double frag = 0;
  for (const TypicalShape& s : shapes) {
    const FragPod& p = s.pod;
    const bool usable = p.num_gpu > 0 && node.model < 32 && (p.model_mask >> node.model & 1u) &&
                        node.cpu_free >= p.cpu_milli && node.GpusWithFree(p.gpu_milli) >= p.num_gpu;
    if (!usable) {
      frag += s.weight * free_total;
      continue;
    }
    int stranded = 0;
    for (int i = 0; i < node.gpus; ++i) {
      const int f = node.gpu_free[static_cast<size_t>(i)];
      if (f < p.gpu_milli) stranded += f;
    }
    frag += s.weight * stranded;
  }
  return frag;
}

FragmentationMeter::FragmentationMeter(std::vector<TypicalShape> shapes)
    : shapes_(std::move(shapes)) {
  for (const TypicalShape& s : shapes_) cpu_thresholds_.push_back(s.pod.cpu_milli);
  std::sort(cpu_thresholds_.begin(), cpu_thresholds_.end());
  cpu_thresholds_.erase(std::unique(cpu_thresholds_.begin(), cpu_thresholds_.end()),
                        cpu_thresholds_.end());
  memo_.reserve(1 << 16);
}

double FragmentationMeter::Of(const FragNodeState& node) const {
  // The key holds the CPU rank in 8 bits; a workload with more distinct
  // typical CPU requests than that goes without the memo.
  if (cpu_thresholds_.size() > 255) return NodeFragmentation(node, shapes_);
  // Free CPU matters only as the number of shape CPU requests it meets.
  const auto cpu_rank = static_cast<uint64_t>(
      std::upper_bound(cpu_thresholds_.begin(), cpu_thresholds_.end(), node.cpu_free) -
      cpu_thresholds_.begin());
  // Insertion sort: eight values, already nearly in order as often as not.
  std::array<int, kFragMaxGpusPerNode> g = node.gpu_free;
  for (size_t i = 1; i < g.size(); ++i) {
    const int v = g[i];
    size_t j = i;
    for (; j > 0 && g[j - 1] > v; --j) g[j] = g[j - 1];
    g[j] = v;
  }
  uint64_t hi = static_cast<uint64_t>(node.model) << 8 | (cpu_rank & 0xFF);
  uint64_t lo = 0;
  for (size_t i = 0; i < 4; ++i) hi = hi << 11 | static_cast<uint64_t>(g[i]);
  for (size_t i = 4; i < 8; ++i) lo = lo << 11 | static_cast<uint64_t>(g[i]);
  const std::pair<uint64_t, uint64_t> key{hi, lo};
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  if (memo_.size() >= kMaxMemo) memo_.clear();  // a long-lived meter stays bounded
  const double frag = NodeFragmentation(node, shapes_);
  memo_.emplace(key, frag);
  return frag;
}

}  // namespace gleaner::sched
