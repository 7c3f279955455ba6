#include "sched/gang_placement.h"

#include <algorithm>
#include <tuple>

#include "sched/wait_reason.h"

namespace gleaner::sched {
namespace {

struct Member {
  NodeIndex node = 0;
  GpuChoice choice;
};

std::string RackWord(const std::string& rack) { return rack.empty() ? "(no rack)" : rack; }

// The gang on `members` (rank order), all GPUs node by node.
Placement Gang(const std::vector<Member>& members) {
  Placement p;
  p.node = members.front().node;
  for (const Member& m : members) {
    p.gpus.insert(p.gpus.end(), m.choice.gpus.begin(), m.choice.gpus.end());
  }
  return p;
}

}  // namespace

std::optional<Placement> FindGangPlacement(const ClusterState& cluster, const JobRequest& job,
                                           const std::vector<ClassId>& allowed,
                                           const GpuFilter* may_take) {
  const auto need = static_cast<size_t>(job.nodes);
  std::optional<Placement> spanning;  // the first class that fits only across racks
  for (ClassId c : allowed) {
    // Nodes with room, tightest first, by rack: the buckets name them
    // without a look at any GPU. A filter (reservations, backfill) may
    // still refuse some; ChooseGpus has the last word, on the nodes tried.
    std::vector<std::vector<NodeIndex>> by_rack(cluster.rack_count());
    size_t room = 0;
    for (int count = job.gpus; count <= cluster.LargestFree(c); ++count) {
      for (NodeIndex n : cluster.NodesWithFree(c, count)) {
        if (!cluster.HasHostRoom(n, job)) continue;
        by_rack[cluster.node(n).rack].push_back(n);
        ++room;
      }
    }
    if (room < need) continue;
    std::vector<uint32_t> racks;
    for (uint32_t r = 0; r < by_rack.size(); ++r) {
      if (!by_rack[r].empty()) racks.push_back(r);
    }
    const auto by_size = [&](bool fewest_first) {
      std::sort(racks.begin(), racks.end(), [&](uint32_t a, uint32_t b) {
        const size_t x = by_rack[a].size(), y = by_rack[b].size();
        if (x != y) return fewest_first ? x < y : x > y;
        return cluster.RackName(a) < cluster.RackName(b);
      });
    };
    // Adds members from `nodes` (in order) until `chosen` holds `need`.
    const auto take_from = [&](const std::vector<NodeIndex>& nodes, std::vector<Member>* chosen) {
      for (NodeIndex n : nodes) {
        if (chosen->size() == need) break;
        if (auto choice = ChooseGpus(cluster, n, c, job.gpus, may_take)) {
          chosen->push_back({n, std::move(*choice)});
        }
      }
    };
    // One rack: of those that can hold it, the one with the fewest nodes
    // with room.
    by_size(true);
    for (uint32_t r : racks) {
      if (by_rack[r].size() < need) continue;
      std::vector<Member> chosen;
      take_from(by_rack[r], &chosen);
      if (chosen.size() == need) return Gang(chosen);
    }
    if (job.one_rack || spanning) continue;
    // Across racks: the fullest first, so it spans as few as it can.
    by_size(false);
    std::vector<Member> chosen;
    std::string spans;
    for (uint32_t r : racks) {
      const size_t before = chosen.size();
      take_from(by_rack[r], &chosen);
      const size_t took = chosen.size() - before;
      if (took > 0) {
        spans += (spans.empty() ? "" : ", ") + RackWord(cluster.RackName(r)) + " (" +
                 std::to_string(took) + (took == 1 ? " node)" : " nodes)");
      }
      if (chosen.size() == need) break;
    }
    if (chosen.size() < need) continue;  // the filter left too few
    spanning = Gang(chosen);
    spanning->why = "spans racks " + spans + ": no one rack has " + std::to_string(need) +
                    " nodes with " + std::to_string(job.gpus) + " free GPUs";
  }
  return spanning;
}

std::string GangRejection(const ClusterState& cluster, const JobRequest& job,
                          const std::vector<ClassId>& allowed) {
  const auto need = static_cast<int64_t>(job.nodes);
  int64_t most_nodes = 0;
  for (ClassId c : allowed)
    most_nodes = std::max(most_nodes, cluster.NodesWithAtLeast(c, job.gpus));
  const std::string what =
      "needs " + std::to_string(job.nodes) + " nodes with " + DescribeNeed(job) + " each";
  if (most_nodes < need) {
    return what + "; the cluster has " + std::to_string(most_nodes) +
           (most_nodes == 1 ? " such node" : " such nodes");
  }
  if (!job.one_rack) return "";
  // Per allowed class and rack: nodes that could ever hold a member.
  std::pair<int64_t, uint32_t> largest_rack{0, 0};
  for (ClassId c : allowed) {
    std::vector<int64_t> by_rack(cluster.rack_count(), 0);
    for (NodeIndex n = 0; n < cluster.node_count(); ++n) {
      const NodeState& node = cluster.node(n);
      if (!node.alive) continue;
      int of_class = 0;
      for (GpuIndex g : node.gpus) of_class += cluster.gpu(g).whole_class == c ? 1 : 0;
      if (of_class >= job.gpus) ++by_rack[node.rack];
    }
    for (uint32_t r = 0; r < by_rack.size(); ++r) {
      if (std::tuple(by_rack[r], cluster.RackName(largest_rack.second)) >
          std::tuple(largest_rack.first, cluster.RackName(r))) {
        largest_rack = {by_rack[r], r};
      }
    }
  }
  if (largest_rack.first < need) {
    return what + " under one rack; the largest rack, " +
           RackWord(cluster.RackName(largest_rack.second)) + ", has " +
           std::to_string(largest_rack.first) + "; drop one_rack to let it span racks";
  }
  return "";
}

int NodesWithRoom(const ClusterState& cluster, const JobRequest& job,
                  const std::vector<ClassId>& allowed) {
  size_t most = 0;
  for (ClassId c : allowed) {
    size_t here = 0;
    for (int count = job.gpus; count <= cluster.LargestFree(c); ++count) {
      if (!job.asks_host()) {
        here += cluster.NodesWithFree(c, count).size();
        continue;
      }
      for (NodeIndex n : cluster.NodesWithFree(c, count)) here += cluster.HasHostRoom(n, job);
    }
    most = std::max(most, here);
  }
  return static_cast<int>(most);
}

}  // namespace gleaner::sched
