#include "sim/owner_sources.h"

#include <algorithm>

namespace gleaner::sim {
namespace {

constexpr int64_t kMinute = 60;

// Appends the minute's step, with a no-data step after it when the next row
// is further than two minutes away.
void AddMinute(std::vector<OccupancyStep>& steps, OccupancyStep step, int64_t next_at_s) {
  steps.push_back(step);
  if (next_at_s - step.at_s > 2 * kMinute) steps.push_back({step.at_s + kMinute, 0, 0});
}

}  // namespace

core::Result<OwnerTimeline> TimelineFromHelios(const std::vector<HeliosVc>& vcs,
                                               int gpus_per_node) {
  if (gpus_per_node < 1) return core::InvalidArgument("GPUs per node must be at least 1");
  std::vector<OccupancyGroup> groups;
  int64_t end_s = 0;
  for (const HeliosVc& vc : vcs) {
    if (vc.minutes.empty()) return core::InvalidArgument(vc.name + " has no minutes");
    OccupancyGroup g;
    g.name = vc.name;
    int32_t most = 0;
    for (const HeliosMinute& m : vc.minutes) most = std::max(most, m.running_gpus + m.idle_gpus);
    for (int left = most; left > 0; left -= gpus_per_node) {
      g.node_gpus.push_back(std::min(left, gpus_per_node));
    }
    for (size_t i = 0; i < vc.minutes.size(); ++i) {
      const HeliosMinute& m = vc.minutes[i];
      const int64_t next = i + 1 < vc.minutes.size() ? vc.minutes[i + 1].t_s : m.t_s + kMinute;
      AddMinute(g.steps, {m.t_s, m.running_gpus, m.running_gpus + m.idle_gpus}, next);
    }
    end_s = std::max(end_s, vc.minutes.back().t_s + kMinute);
    if (!g.node_gpus.empty()) groups.push_back(std::move(g));
  }
  return TimelineFromOccupancy(vcs.size() == 1 ? vcs[0].name : "helios", groups, end_s);
}

core::Result<OwnerTimeline> TimelineFromPhilly(const PhillyNodeSequence& sequence,
                                               const std::vector<PhillyMachine>& machines) {
  if (sequence.minutes.empty()) return core::InvalidArgument("the node sequence has no minutes");
  OccupancyGroup g;
  g.name = "philly";
  g.whole_nodes = true;
  for (const PhillyMachine& m : machines) g.node_gpus.push_back(m.gpus);
  int32_t most = 0;
  for (const PhillyMinute& m : sequence.minutes) most = std::max(most, m.total_nodes);
  if (most > static_cast<int32_t>(machines.size())) {
    return core::InvalidArgument("the node sequence counts up to " + std::to_string(most) +
                                 " nodes but the machine list has " +
                                 std::to_string(machines.size()) +
                                 "; give the machine list of the same cluster");
  }
  for (size_t i = 0; i < sequence.minutes.size(); ++i) {
    const PhillyMinute& m = sequence.minutes[i];
    const int64_t next =
        i + 1 < sequence.minutes.size() ? sequence.minutes[i + 1].t_s : m.t_s + kMinute;
    AddMinute(
        g.steps,
        m.gap ? OccupancyStep{m.t_s, 0, 0} : OccupancyStep{m.t_s, m.active_nodes, m.total_nodes},
        next);
  }
  return TimelineFromOccupancy("philly", {g}, sequence.minutes.back().t_s + kMinute);
}

}  // namespace gleaner::sim
