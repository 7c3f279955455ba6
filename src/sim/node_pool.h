#pragma once

#include <optional>
#include <set>
#include <vector>

namespace gleaner::sim {

// The GPUs of a plain replay's cluster: `nodes` alike nodes of
// `gpus_per_node` whole GPUs, with the reference placement rule of the
// baseline policies (issue 6's "fifo"):
//  - a job of up to gpus_per_node GPUs goes on one node, best fit: the
//    fitting node with the fewest free GPUs, lowest index among equals;
//  - a larger job takes ceil(gpus / gpus_per_node) wholly free nodes, the
//    lowest-indexed ones, whole (a remainder of the last node stays idle
//    with it, as a gang scheduler that hands out whole nodes would leave it).
// Finding a node costs a few set look-ups: nodes are bucketed by free count.
// Thread-compatible.
class NodePool {
 public:
  // Where a job runs: the nodes it holds and how many GPUs of each.
  struct Allocation {
    std::vector<std::pair<int, int>> parts;  // (node, GPUs taken)
  };

  NodePool(int nodes, int gpus_per_node);

  // Takes room for `gpus` GPUs by the rule above, or nullopt when there is
  // none now (the pool is unchanged then).
  std::optional<Allocation> Take(int gpus);
  // Gives back what Take returned.
  void Give(const Allocation& allocation);

  int gpus_per_node() const { return gpus_per_node_; }
  int node_count() const { return static_cast<int>(free_.size()); }
  int free_gpus() const { return free_gpus_; }

 private:
  void Move(int node, int new_free);

  int gpus_per_node_;
  std::vector<int> free_;               // per node
  std::vector<std::set<int>> by_free_;  // [k]: nodes with k free GPUs
  int free_gpus_ = 0;
};

}  // namespace gleaner::sim
