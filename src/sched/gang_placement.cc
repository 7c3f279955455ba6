#include "sched/gang_placement.h"

#include <algorithm>
#include <map>

#include "sched/wait_reason.h"

namespace gleaner::sched {
namespace {

struct Member {
  NodeIndex node = 0;
  GpuChoice choice;
};

std::string RackWord(const std::string& rack) { return rack.empty() ? "(no rack)" : rack; }

// The gang on `members` (rank order), all GPUs node by node.
Placement Gang(const std::vector<const Member*>& members) {
  Placement p;
  p.node = members.front()->node;
  for (const Member* m : members) {
    p.gpus.insert(p.gpus.end(), m->choice.gpus.begin(), m->choice.gpus.end());
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
    // Tightest nodes first, by rack.
    std::map<std::string, std::vector<Member>> by_rack;
    size_t room = 0;
    for (int count = job.gpus; count <= cluster.LargestFree(c); ++count) {
      for (NodeIndex n : cluster.NodesWithFree(c, count)) {
        auto choice = ChooseGpus(cluster, n, c, job.gpus, may_take);
        if (!choice) continue;
        by_rack[cluster.node(n).rack].push_back({n, std::move(*choice)});
        ++room;
      }
    }
    if (room < need) continue;
    const std::vector<Member>* rack = nullptr;
    for (const auto& [name, members] : by_rack) {
      if (members.size() >= need && (!rack || members.size() < rack->size())) rack = &members;
    }
    if (rack) {
      std::vector<const Member*> chosen;
      for (size_t i = 0; i < need; ++i) chosen.push_back(&(*rack)[i]);
      return Gang(chosen);
    }
    if (job.one_rack || spanning) continue;
    std::vector<std::pair<const std::string*, const std::vector<Member>*>> racks;
    for (const auto& [name, members] : by_rack) racks.emplace_back(&name, &members);
    std::stable_sort(racks.begin(), racks.end(), [](const auto& a, const auto& b) {
      return a.second->size() > b.second->size();
    });
    std::vector<const Member*> chosen;
    std::string spans;
    for (const auto& [name, members] : racks) {
      const size_t take = std::min(members->size(), need - chosen.size());
      for (size_t i = 0; i < take; ++i) chosen.push_back(&(*members)[i]);
      spans += (spans.empty() ? "" : ", ") + RackWord(*name) + " (" + std::to_string(take) +
               (take == 1 ? " node)" : " nodes)");
      if (chosen.size() == need) break;
    }
    spanning = Gang(chosen);
    spanning->why = "spans racks " + spans + ": no one rack has " + std::to_string(need) +
                    " nodes with " + std::to_string(job.gpus) + " free GPUs";
  }
  return spanning;
}

std::string GangRejection(const ClusterState& cluster, const JobRequest& job,
                          const std::vector<ClassId>& allowed) {
  // Per allowed class: nodes that could ever hold a member, by rack.
  size_t most_nodes = 0;
  std::pair<size_t, std::string> largest_rack{0, ""};
  for (ClassId c : allowed) {
    std::map<std::string, size_t> by_rack;
    size_t nodes = 0;
    for (NodeIndex n = 0; n < cluster.node_count(); ++n) {
      const NodeState& node = cluster.node(n);
      if (!node.alive) continue;
      int of_class = 0;
      for (GpuIndex g : node.gpus) of_class += cluster.gpu(g).whole_class == c ? 1 : 0;
      if (of_class < job.gpus) continue;
      ++nodes;
      ++by_rack[node.rack];
    }
    most_nodes = std::max(most_nodes, nodes);
    for (const auto& [rack, count] : by_rack) {
      if (count > largest_rack.first) largest_rack = {count, rack};
    }
  }
  const auto need = static_cast<size_t>(job.nodes);
  const std::string what =
      "needs " + std::to_string(job.nodes) + " nodes with " + DescribeNeed(job) + " each";
  if (most_nodes < need) {
    return what + "; the cluster has " + std::to_string(most_nodes) +
           (most_nodes == 1 ? " such node" : " such nodes");
  }
  if (job.one_rack && largest_rack.first < need) {
    return what + " under one rack; the largest rack, " + RackWord(largest_rack.second) + ", has " +
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
      here += cluster.NodesWithFree(c, count).size();
    }
    most = std::max(most, here);
  }
  return static_cast<int>(most);
}

}  // namespace gleaner::sched
