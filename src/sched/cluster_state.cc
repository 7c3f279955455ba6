#include "sched/cluster_state.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "sched/job_request.h"

namespace gleaner::sched {
namespace {

[[noreturn]] void Broken(const char* what) {
  std::fprintf(stderr, "gleaner: broken invariant in ClusterState: %s\n", what);
  std::abort();
}

const std::set<NodeIndex>& EmptyNodeSet() {
  static const std::set<NodeIndex> kEmpty;
  return kEmpty;
}

}  // namespace

ClassId ClusterState::ClassOf(const GpuSpec& spec) {
  const auto key = std::make_tuple(spec.model, spec.memory.count(), spec.lend_memory.count());
  auto it = class_ids_.find(key);
  if (it != class_ids_.end()) return it->second;
  const auto id = static_cast<ClassId>(classes_.size());
  classes_.push_back({spec.model, spec.memory, spec.lend_memory});
  class_ids_.emplace(key, id);
  buckets_.emplace_back();
  partial_.emplace_back();
  node_sizes_.emplace_back();
  return id;
}

core::Status ClusterState::AddNode(const NodeSpec& spec) {
  if (spec.id.empty()) return core::InvalidArgument("node: an id is required");
  if (node_ids_.contains(spec.id)) {
    return core::InvalidArgument("node " + spec.id.str() + " is already in the cluster");
  }
  if (spec.gpus.empty()) {
    return core::InvalidArgument("node " + spec.id.str() + " has no GPUs: nothing to schedule");
  }
  std::set<core::GpuUuid> seen;
  for (const GpuSpec& g : spec.gpus) {
    if (g.uuid.empty()) {
      return core::InvalidArgument("node " + spec.id.str() + ": every GPU needs its UUID");
    }
    if (gpu_ids_.contains(g.uuid) || !seen.insert(g.uuid).second) {
      return core::InvalidArgument("node " + spec.id.str() + ": GPU " + g.uuid.str() +
                                   " is already in the cluster");
    }
  }
  const auto n = static_cast<NodeIndex>(nodes_.size());
  auto [rack, fresh] = rack_ids_.try_emplace(spec.rack, static_cast<uint32_t>(racks_.size()));
  if (fresh) racks_.push_back(spec.rack);
  nodes_.push_back({spec.id,
                    true,
                    {},
                    rack->second,
                    spec.host,
                    spec.host.cpu_milli,
                    static_cast<int64_t>(spec.host.memory.count())});
  node_ids_.emplace(spec.id, n);
  free_whole_.emplace_back();
  free_milli_on_node_.push_back(0);
  std::map<ClassId, int> sizes;
  for (const GpuSpec& g : spec.gpus) {
    const auto gi = static_cast<GpuIndex>(gpus_.size());
    const ClassId c = ClassOf(g);
    gpus_.push_back({g, n, c, c, kMilliPerGpu});
    gpu_ids_.emplace(g.uuid, gi);
    nodes_[n].gpus.push_back(gi);
    ++sizes[c];
    bool known = false;
    for (auto& [cls, count] : free_whole_[n]) known = known || cls == c;
    if (!known) free_whole_[n].emplace_back(c, 0);
    Index(gi);
  }
  for (const auto& [c, count] : sizes) ++node_sizes_[c][count];
  live_gpus_ += static_cast<int64_t>(spec.gpus.size());
  return core::Status::Ok();
}

bool HostFits(const HostResources& capacity, int64_t free_cpu_milli, int64_t free_memory,
              const JobRequest& job) {
  return (job.cpu_milli == 0 || capacity.cpu_milli == 0 || free_cpu_milli >= job.cpu_milli) &&
         (job.memory.count() == 0 || capacity.memory.count() == 0 ||
          free_memory >= static_cast<int64_t>(job.memory.count()));
}

bool ClusterState::HasHostRoom(NodeIndex n, const JobRequest& job) const {
  const NodeState& node = nodes_[n];
  return HostFits(node.capacity, node.free_cpu_milli, node.free_memory, job);
}

void ClusterState::TakeHost(NodeIndex n, const JobRequest& job) {
  nodes_[n].free_cpu_milli -= job.cpu_milli;
  nodes_[n].free_memory -= static_cast<int64_t>(job.memory.count());
}

void ClusterState::GiveHost(NodeIndex n, const JobRequest& job) {
  nodes_[n].free_cpu_milli += job.cpu_milli;
  nodes_[n].free_memory += static_cast<int64_t>(job.memory.count());
}

HostResources ClusterState::LargestHost() const {
  HostResources most;
  bool cpus_unknown = false;
  bool memory_unknown = false;
  for (const NodeState& node : nodes_) {
    if (!node.alive) continue;
    most.cpu_milli = std::max(most.cpu_milli, node.capacity.cpu_milli);
    most.memory = std::max(most.memory, node.capacity.memory);
    cpus_unknown = cpus_unknown || node.capacity.cpu_milli == 0;
    memory_unknown = memory_unknown || node.capacity.memory.count() == 0;
  }
  // A node that does not say is never short: no ask is too large for it.
  if (cpus_unknown) most.cpu_milli = 0;
  if (memory_unknown) most.memory = core::Bytes();
  return most;
}

core::Result<NodeIndex> ClusterState::RemoveNode(const core::NodeId& id) {
  auto it = node_ids_.find(id);
  if (it == node_ids_.end() || !nodes_[it->second].alive) {
    return core::NotFound("no node " + id.str() + " in the cluster");
  }
  const NodeIndex n = it->second;
  std::map<ClassId, int> sizes;
  for (GpuIndex g : nodes_[n].gpus) {
    Unindex(g);
    ++sizes[gpus_[g].whole_class];
  }
  for (const auto& [c, count] : sizes) {
    auto s = node_sizes_[c].find(count);
    if (--s->second == 0) node_sizes_[c].erase(s);
  }
  nodes_[n].alive = false;
  live_gpus_ -= static_cast<int64_t>(nodes_[n].gpus.size());
  // The id may come back (a rebooted host): it then gets a new index.
  node_ids_.erase(it);
  for (GpuIndex g : nodes_[n].gpus) gpu_ids_.erase(gpus_[g].spec.uuid);
  return n;
}

std::optional<NodeIndex> ClusterState::FindNode(const core::NodeId& id) const {
  auto it = node_ids_.find(id);
  if (it == node_ids_.end()) return std::nullopt;
  return it->second;
}

std::optional<GpuIndex> ClusterState::FindGpu(const core::GpuUuid& uuid) const {
  auto it = gpu_ids_.find(uuid);
  if (it == gpu_ids_.end()) return std::nullopt;
  return it->second;
}

void ClusterState::SetLendable(GpuIndex g, bool lendable, core::Bytes lend_memory) {
  GpuSpec& spec = gpus_[g].spec;
  // A GPU no longer lendable keeps its class: nothing is placed there.
  const bool reclass = lendable && spec.lend_memory != lend_memory;
  if (spec.lendable == lendable && !reclass) return;
  Unindex(g);
  spec.lendable = lendable;
  if (reclass) {
    spec.lend_memory = lend_memory;
    Reclass(g, ClassOf(spec));
  }
  Index(g);
}

// Moves an unindexed GPU to class `to`. What a node can ever run
// (node_sizes_) stays counted under the GPU's whole class.
void ClusterState::Reclass(GpuIndex g, ClassId to) {
  gpus_[g].gpu_class = to;
  bool known = false;
  for (auto& [cls, count] : free_whole_[gpus_[g].node]) known = known || cls == to;
  if (!known) free_whole_[gpus_[g].node].emplace_back(to, 0);
}

void ClusterState::Take(GpuIndex g, int milli) {
  if (milli <= 0 || milli > gpus_[g].free_milli) Broken("Take of more than is free");
  Unindex(g);
  gpus_[g].free_milli -= milli;
  Index(g);
}

void ClusterState::Give(GpuIndex g, int milli) {
  if (milli <= 0 || gpus_[g].free_milli + milli > kMilliPerGpu) Broken("Give of more than taken");
  Unindex(g);
  gpus_[g].free_milli += milli;
  Index(g);
}

int ClusterState::FreeWhole(NodeIndex n, ClassId c) const {
  for (const auto& [cls, count] : free_whole_[n]) {
    if (cls == c) return count;
  }
  return 0;
}

int ClusterState::FreeMilliOnNode(NodeIndex n) const { return free_milli_on_node_[n]; }

const std::set<NodeIndex>& ClusterState::NodesWithFree(ClassId c, int count) const {
  const auto& b = buckets_[c];
  if (count < 1 || static_cast<size_t>(count) >= b.size()) return EmptyNodeSet();
  return b[static_cast<size_t>(count)];
}

int ClusterState::LargestFree(ClassId c) const {
  const auto& b = buckets_[c];
  for (size_t i = b.size(); i-- > 1;) {
    if (!b[i].empty()) return static_cast<int>(i);
  }
  return 0;
}

int64_t ClusterState::NodesWithAtLeast(ClassId c, int count) const {
  int64_t nodes = 0;
  for (auto s = node_sizes_[c].lower_bound(count); s != node_sizes_[c].end(); ++s) {
    nodes += s->second;
  }
  return nodes;
}

int ClusterState::LargestNode(ClassId c) const {
  return node_sizes_[c].empty() ? 0 : node_sizes_[c].rbegin()->first;
}

bool ClusterState::Counts(const GpuState& g) const {
  return nodes_[g.node].alive && g.spec.lendable && g.free_milli > 0;
}

void ClusterState::Unindex(GpuIndex gi) {
  const GpuState& g = gpus_[gi];
  if (!Counts(g)) return;
  free_milli_ -= g.free_milli;
  free_milli_on_node_[g.node] -= g.free_milli;
  if (g.free_milli == kMilliPerGpu) {
    MoveBucket(g.node, g.gpu_class, -1);
  } else {
    partial_[g.gpu_class].erase({g.free_milli, gi});
  }
}

void ClusterState::Index(GpuIndex gi) {
  const GpuState& g = gpus_[gi];
  if (!Counts(g)) return;
  free_milli_ += g.free_milli;
  free_milli_on_node_[g.node] += g.free_milli;
  if (g.free_milli == kMilliPerGpu) {
    MoveBucket(g.node, g.gpu_class, +1);
  } else {
    partial_[g.gpu_class].insert({g.free_milli, gi});
  }
}

void ClusterState::MoveBucket(NodeIndex n, ClassId c, int delta) {
  for (auto& [cls, count] : free_whole_[n]) {
    if (cls != c) continue;
    auto& b = buckets_[c];
    if (count > 0) b[static_cast<size_t>(count)].erase(n);
    count += delta;
    if (count < 0) Broken("negative free count");
    if (static_cast<size_t>(count) >= b.size()) b.resize(static_cast<size_t>(count) + 1);
    if (count > 0) b[static_cast<size_t>(count)].insert(n);
    return;
  }
  Broken("class not on node");
}

}  // namespace gleaner::sched
