#pragma once

#include <optional>
#include <vector>

#include "sched/cluster_state.h"
#include "sched/gpu_choice.h"
#include "sched/job_request.h"

namespace gleaner::sched {

// A running job on the node that may be preempted for the job at hand,
// with its selector cost.
struct EvictableJob {
  JobId job = 0;
  std::vector<GpuIndex> gpus;
  int milli_per_gpu = 1000;
  double cost = 0;
  // A shrink, not a preemption: the job gives up `gpus` and keeps running
  // on the rest. Any mix of a job's entries must free disjoint GPUs.
  bool shrink = false;
  // The host CPUs and memory it frees here (none for a shrink: it runs on).
  int64_t cpu_milli = 0;
  core::Bytes memory = {};
};

struct NodeEviction {
  NodeIndex node = 0;
  std::vector<JobId> victims;  // to preempt, cheapest first
  // Jobs to shrink (not also preempted), with the GPUs each gives up.
  std::vector<std::pair<JobId, std::vector<GpuIndex>>> shrinks;
  double cost = 0;
};

// Which of `evictable` (all on node `n`) must leave for `job` to fit there:
// adds them cheapest first (ties by id) until enough GPUs of one allowed
// class are free (or, for a fraction, one GPU has room) and the node's CPUs
// and memory suffice (HasHostRoom), then drops every
// victim the job can do without, most expensive first, so the set is
// minimal. Nullopt when even all of them are not enough. Shrink entries
// are planned like victims; a job both shrunk and preempted is preempted. GPUs `may_take`
// refuses (reserved for others) do not count towards the fit.
std::optional<NodeEviction> PlanEvictionOnNode(const ClusterState& cluster, const JobRequest& job,
                                               const std::vector<ClassId>& allowed, NodeIndex n,
                                               std::vector<EvictableJob> evictable,
                                               const GpuFilter* may_take = nullptr);

}  // namespace gleaner::sched
