#include "sim/node_pool.h"

namespace gleaner::sim {

NodePool::NodePool(int nodes, int gpus_per_node)
    : gpus_per_node_(gpus_per_node),
      free_(static_cast<size_t>(nodes), gpus_per_node),
      by_free_(static_cast<size_t>(gpus_per_node) + 1),
      free_gpus_(nodes * gpus_per_node) {
  for (int n = 0; n < nodes; ++n) by_free_[static_cast<size_t>(gpus_per_node)].insert(n);
}

void NodePool::Move(int node, int new_free) {
  int& f = free_[static_cast<size_t>(node)];
  by_free_[static_cast<size_t>(f)].erase(node);
  free_gpus_ += new_free - f;
  f = new_free;
  by_free_[static_cast<size_t>(f)].insert(node);
}

std::optional<NodePool::Allocation> NodePool::Take(int gpus) {
  Allocation a;
  if (gpus <= gpus_per_node_) {
    for (int k = gpus; k <= gpus_per_node_; ++k) {
      const std::set<int>& bucket = by_free_[static_cast<size_t>(k)];
      if (bucket.empty()) continue;
      const int node = *bucket.begin();
      Move(node, k - gpus);
      a.parts.emplace_back(node, gpus);
      return a;
    }
    return std::nullopt;
  }
  const size_t whole = static_cast<size_t>((gpus + gpus_per_node_ - 1) / gpus_per_node_);
  const std::set<int>& empty_nodes = by_free_[static_cast<size_t>(gpus_per_node_)];
  if (empty_nodes.size() < whole) return std::nullopt;
  std::vector<int> nodes(empty_nodes.begin(),
                         std::next(empty_nodes.begin(), static_cast<std::ptrdiff_t>(whole)));
  for (int node : nodes) {
    Move(node, 0);
    a.parts.emplace_back(node, gpus_per_node_);
  }
  return a;
}

void NodePool::Give(const Allocation& allocation) {
  for (const auto& [node, taken] : allocation.parts) {
    Move(node, free_[static_cast<size_t>(node)] + taken);
  }
}

}  // namespace gleaner::sim
