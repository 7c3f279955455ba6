#include "sim/owner_timeline.h"

#include <algorithm>

namespace gleaner::sim {
namespace {

// Appends `seg` to a GPU's segments unless it changes nothing.
void Append(std::vector<OwnerSegment>& segments, OwnerSegment seg) {
  if (!segments.empty()) {
    OwnerSegment same = segments.back();
    same.at_s = seg.at_s;
    if (same == seg) return;
    if (segments.back().at_s == seg.at_s) {
      segments.back() = seg;
      return;
    }
  }
  segments.push_back(seg);
}

OwnerSegment CountedState(int64_t at_s, int unit, const OccupancyStep& step) {
  OwnerSegment seg;
  seg.at_s = at_s;
  seg.has_data = unit < step.present;
  if (seg.has_data && unit < step.busy) {
    // Occupancy counts say a job holds the GPU, not how hard it works:
    // taken as fully used, with an owner process on it.
    seg.utilization_pct = 100;
    seg.owner_process = true;
  }
  return seg;
}

}  // namespace

core::Result<OwnerTimeline> TimelineFromOccupancy(std::string name,
                                                  const std::vector<OccupancyGroup>& groups,
                                                  int64_t end_s) {
  OwnerTimeline t;
  t.name = std::move(name);
  t.from_counts = true;
  bool any = false;
  for (const OccupancyGroup& g : groups) {
    if (g.steps.empty())
      return core::InvalidArgument("occupancy group " + g.name + " has no steps");
    for (int n : g.node_gpus) {
      if (n < 1) return core::InvalidArgument("a node of group " + g.name + " has no GPUs");
    }
    t.start_s = any ? std::min(t.start_s, g.steps.front().at_s) : g.steps.front().at_s;
    any = true;
  }
  if (!any) return core::InvalidArgument("no occupancy groups");
  if (end_s <= t.start_s) return core::InvalidArgument("the timeline ends before it starts");
  t.end_s = end_s;

  for (const OccupancyGroup& g : groups) {
    // The GPUs of each unit, as flat GPU indices of the timeline.
    std::vector<std::vector<int>> unit_gpus;
    for (int n : g.node_gpus) {
      const int first = t.gpu_count();
      t.node_gpus.push_back(n);
      for (int i = 0; i < n; ++i) {
        t.gpus.push_back({OwnerSegment{t.start_s}});
        if (!g.whole_nodes) unit_gpus.push_back({first + i});
      }
      if (g.whole_nodes) {
        unit_gpus.emplace_back();
        for (int i = 0; i < n; ++i) unit_gpus.back().push_back(first + i);
      }
    }
    const int units = static_cast<int>(unit_gpus.size());
    // Packed: units [0, busy) are the owner's, [busy, present) quiet, the
    // rest without data. A step changes only the units between the old and
    // new bounds, so the cost follows the changes, not units x steps.
    OccupancyStep last{t.start_s, 0, 0};
    for (const OccupancyStep& step : g.steps) {
      if (step.at_s >= end_s) break;
      if (step.busy < 0 || step.present < 0 || step.busy > step.present) {
        return core::InvalidArgument("group " + g.name + " at " + std::to_string(step.at_s) +
                                     ": busy " + std::to_string(step.busy) + " of " +
                                     std::to_string(step.present) + " present units");
      }
      OccupancyStep clamped = step;
      clamped.present = std::min(step.present, units);
      clamped.busy = std::min(step.busy, clamped.present);
      const int lo = std::min({last.busy, clamped.busy, last.present, clamped.present});
      const int hi = std::max({last.busy, clamped.busy, last.present, clamped.present});
      for (int u = lo; u < hi; ++u) {
        for (int gpu : unit_gpus[static_cast<size_t>(u)]) {
          Append(t.gpus[static_cast<size_t>(gpu)], CountedState(step.at_s, u, clamped));
        }
      }
      last = clamped;
    }
  }
  return t;
}

int64_t QuietGpuSeconds(const OwnerTimeline& t, double busy_pct) {
  int64_t total = 0;
  for (const std::vector<OwnerSegment>& segs : t.gpus) {
    for (size_t i = 0; i < segs.size(); ++i) {
      const int64_t from = std::max(segs[i].at_s, t.start_s);
      const int64_t to = i + 1 < segs.size() ? std::min(segs[i + 1].at_s, t.end_s) : t.end_s;
      if (segs[i].has_data && segs[i].utilization_pct < busy_pct && to > from) total += to - from;
    }
  }
  return total;
}

OwnerTimeline TimelineFromUtilization(std::string name,
                                      const std::vector<UtilizationSeries>& series,
                                      int gpus_per_node) {
  auto seconds = [](core::TimePoint at) { return core::ToUnixMicros(at) / 1'000'000; };
  OwnerTimeline t;
  t.name = std::move(name);
  t.from_counts = false;
  std::vector<int64_t> steps;
  bool any = false;
  for (const UtilizationSeries& s : series) {
    for (size_t i = 0; i < s.points.size(); ++i) {
      const int64_t at = seconds(s.points[i].at);
      t.start_s = any ? std::min(t.start_s, at) : at;
      t.end_s = any ? std::max(t.end_s, at) : at;
      any = true;
      if (i > 0) steps.push_back(at - seconds(s.points[i - 1].at));
    }
  }
  if (!steps.empty()) {
    std::nth_element(steps.begin(), steps.begin() + static_cast<ptrdiff_t>(steps.size() / 2),
                     steps.end());
    t.step_s = std::max<int64_t>(1, steps[steps.size() / 2]);
  }
  const int64_t gap = 3 * t.step_s;
  t.end_s += t.step_s;  // the last sample stands for one step
  for (const UtilizationSeries& s : series) {
    std::vector<OwnerSegment> segs{OwnerSegment{t.start_s}};
    for (size_t i = 0; i < s.points.size(); ++i) {
      const UtilizationPoint& p = s.points[i];
      OwnerSegment seg;
      seg.at_s = seconds(p.at);
      seg.has_data = true;
      seg.utilization_pct = p.utilization_pct;
      seg.memory_bytes = p.memory_used ? static_cast<int64_t>(p.memory_used->count()) : 0;
      // Memory held, or any utilization at all, means a process is there.
      seg.owner_process = seg.memory_bytes > 0 || seg.utilization_pct > 0;
      Append(segs, seg);
      // A sample stands for at most one step; past a gap nothing is known.
      const int64_t next = i + 1 < s.points.size() ? seconds(s.points[i + 1].at) : t.end_s;
      if (next - seg.at_s > gap || i + 1 == s.points.size()) {
        Append(segs, OwnerSegment{std::min(seg.at_s + t.step_s, t.end_s)});
      }
    }
    t.gpus.push_back(std::move(segs));
  }
  for (int left = t.gpu_count(); left > 0; left -= gpus_per_node) {
    t.node_gpus.push_back(std::min(left, gpus_per_node));
  }
  return t;
}

}  // namespace gleaner::sim
