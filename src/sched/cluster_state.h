#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "core/units.h"

namespace gleaner::sched {

// Dense indices the scheduler uses inside; never reused, so a record that
// remembers one stays valid after its node is lost.
using NodeIndex = uint32_t;
using GpuIndex = uint32_t;
// GPUs of one model and memory size: constraints are checked per class,
// not per GPU, and a gang takes GPUs of one class.
using ClassId = uint32_t;

// One GPU as the daemon or a trace describes it.
struct GpuSpec {
  core::GpuUuid uuid;
  int index = 0;       // NVML's index on its node: for display and CUDA_VISIBLE_DEVICES only
  std::string model;   // NVML's name, "NVIDIA H100 80GB HBM3"
  core::Bytes memory;  // total
  // GPUs with the same island id are all NVLink-connected to one another
  // (an NVSwitch node: one island of 8; a hybrid cube mesh: two of 4).
  // -1: no NVLink, PCIe only.
  int nvlink_island = -1;
  bool lendable = true;  // the idle verdict says it may be lent now
  // Zero: lent whole. Otherwise the GPU is shared with a holder that keeps
  // the rest, and only a job declaring at most this much GPU memory may go
  // there (co-location, docs/held-idle.md).
  core::Bytes lend_memory;
  // How much longer its quiet is expected to last at 80 % confidence (the
  // idle verdict's forecast, rounded by RoundQuietWindow); zero: no
  // forecast. Placement prefers a window that outlasts the job.
  core::Duration quiet_p80{};
};

// A host's CPUs (in thousandths) and memory that jobs may claim. Zero: not
// known (a trace, an older agent), so nothing is counted against it.
struct HostResources {
  int64_t cpu_milli = 0;
  core::Bytes memory = {};
  bool operator==(const HostResources&) const = default;
};

struct NodeSpec {
  core::NodeId id;
  std::vector<GpuSpec> gpus;
  // The rack (or leaf switch) the host declares: a gang over several nodes
  // prefers nodes under one label. Empty: none declared; such nodes count
  // as one rack of their own.
  std::string rack = {};
  HostResources host = {};
};

struct GpuClass {
  std::string model;
  core::Bytes memory = {};
  core::Bytes lend_memory;  // zero: whole GPUs; else shared ones with this much to lend
};

struct GpuState {
  GpuSpec spec;
  NodeIndex node = 0;
  ClassId gpu_class = 0;    // now: shared GPUs move to the class of what they lend
  ClassId whole_class = 0;  // lent whole: what its node can ever run is counted here
  int free_milli = 1000;    // not yet given to jobs, whether lendable or not
};

struct NodeState {
  core::NodeId id;
  bool alive = true;
  std::vector<GpuIndex> gpus;
  uint32_t rack = 0;  // RackName(rack); 0 is the unnamed one
  HostResources capacity;
  // Not claimed by jobs. Signed: a job taken back after a restart is
  // counted even where the host now reports less.
  int64_t free_cpu_milli = 0;
  int64_t free_memory = 0;
};

struct JobRequest;

// Whether a node of `capacity` with this much unclaimed can take the job's
// CPUs and memory: always for what the job does not ask or the node does
// not report.
bool HostFits(const HostResources& capacity, int64_t free_cpu_milli, int64_t free_memory,
              const JobRequest& job);

// The GPUs of the cluster and what is free on them, indexed so that finding
// a fitting node costs a few set look-ups, not a scan: per class, nodes are
// bucketed by how many whole, lendable, free GPUs of that class they have,
// and partly used lendable GPUs are kept in order of their free share.
// Mechanism only: who gets what is decided elsewhere. Thread-compatible.
class ClusterState {
 public:
  // Adds a node with its GPUs. InvalidArgument when the node or a GPU UUID
  // is already known, or the node has no GPUs.
  core::Status AddNode(const NodeSpec& spec);
  // Marks the node lost: its GPUs leave every index. NotFound if unknown.
  core::Result<NodeIndex> RemoveNode(const core::NodeId& id);

  std::optional<NodeIndex> FindNode(const core::NodeId& id) const;
  std::optional<GpuIndex> FindGpu(const core::GpuUuid& uuid) const;

  // Whether the GPU may be lent now, and how: whole (lend_memory zero) or
  // beside its holder with `lend_memory` to lend, which moves it to the
  // class of that size.
  void SetLendable(GpuIndex gpu, bool lendable, core::Bytes lend_memory = {});
  // The GPU's expected quiet (GpuSpec::quiet_p80); indexes do not change.
  void SetQuietWindow(GpuIndex gpu, core::Duration quiet_p80) {
    gpus_[gpu].spec.quiet_p80 = quiet_p80;
  }
  // Whether node `n` has the host CPUs and memory the job asks for
  // unclaimed (always, for what the job does not ask or the host does not
  // report).
  bool HasHostRoom(NodeIndex n, const JobRequest& job) const;
  // Claims the job's host CPUs and memory on node `n` (TakeHost), or gives
  // them back (GiveHost).
  void TakeHost(NodeIndex n, const JobRequest& job);
  void GiveHost(NodeIndex n, const JobRequest& job);
  // The most CPUs and memory any live node reports; zero where some live
  // node does not report it (that node is never short of it).
  HostResources LargestHost() const;

  // Gives `milli` of the GPU to a job (Take) or back (Give). Taking more
  // than is free is a broken invariant.
  void Take(GpuIndex gpu, int milli);
  void Give(GpuIndex gpu, int milli);

  const GpuState& gpu(GpuIndex g) const { return gpus_[g]; }
  const NodeState& node(NodeIndex n) const { return nodes_[n]; }
  size_t node_count() const { return nodes_.size(); }  // lost ones included
  size_t class_count() const { return classes_.size(); }
  const GpuClass& gpu_class(ClassId c) const { return classes_[c]; }

  // Whole lendable free GPUs of class `c` on node `n`.
  int FreeWhole(NodeIndex n, ClassId c) const;
  // Lendable free milli-GPU on node `n`, all classes.
  int FreeMilliOnNode(NodeIndex n) const;
  // Nodes with exactly `count` (>= 1) whole free GPUs of class `c`, lowest
  // index first; empty beyond the largest count.
  const std::set<NodeIndex>& NodesWithFree(ClassId c, int count) const;
  // The largest whole free count of class `c` on any node (0: none).
  int LargestFree(ClassId c) const;
  // Live nodes with at least `count` GPUs of class `c`, free or not.
  int64_t NodesWithAtLeast(ClassId c, int count) const;
  // Rack labels by id (NodeState::rack): "" first, then as nodes declared them.
  const std::string& RackName(uint32_t rack) const { return racks_[rack]; }
  size_t rack_count() const { return racks_.size(); }
  // The most GPUs of class `c` any live node has, free or not, counting
  // each GPU in its whole class (0 for the classes of shared GPUs).
  int LargestNode(ClassId c) const;
  // Partly used lendable GPUs of class `c`, as (free milli, gpu), fewest
  // free first.
  const std::set<std::pair<int, GpuIndex>>& PartialGpus(ClassId c) const { return partial_[c]; }
  // Lendable free capacity of the whole cluster in milli-GPU.
  int64_t free_milli() const { return free_milli_; }
  int64_t live_gpu_count() const { return live_gpus_; }

 private:
  bool Counts(const GpuState& g) const;
  void Unindex(GpuIndex g);
  void Index(GpuIndex g);
  void MoveBucket(NodeIndex n, ClassId c, int delta);
  ClassId ClassOf(const GpuSpec& spec);
  void Reclass(GpuIndex g, ClassId to);

  std::vector<GpuClass> classes_;
  std::map<std::tuple<std::string, uint64_t, uint64_t>, ClassId> class_ids_;
  std::vector<NodeState> nodes_;
  std::vector<GpuState> gpus_;
  std::unordered_map<core::NodeId, NodeIndex> node_ids_;
  std::unordered_map<core::GpuUuid, GpuIndex> gpu_ids_;
  // Per node: (class, whole free GPUs of it); few classes per node.
  std::vector<std::vector<std::pair<ClassId, int>>> free_whole_;
  std::vector<int> free_milli_on_node_;
  // buckets_[class][count]: nodes with that many whole free GPUs of class.
  std::vector<std::vector<std::set<NodeIndex>>> buckets_;
  std::vector<std::set<std::pair<int, GpuIndex>>> partial_;
  // node_sizes_[class]: GPUs of that class per live node -> how many nodes.
  std::vector<std::map<int, int>> node_sizes_;
  std::vector<std::string> racks_{""};
  std::map<std::string, uint32_t> rack_ids_{{"", 0}};
  int64_t free_milli_ = 0;
  int64_t live_gpus_ = 0;
};

}  // namespace gleaner::sched
