#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/cluster_state.h"
#include "sched/gpu_choice.h"
#include "sched/job_request.h"
#include "sched/placement_scorer.h"

namespace gleaner::sched {

struct Placement {
  NodeIndex node = 0;
  std::vector<GpuIndex> gpus;
  int milli_per_gpu = 1000;
  double cost = 0;
  // A preference beyond fit that chose it: a gang spanning racks, a window
  // expected to outlast the job.
  std::string why = {};
};

// Why nothing fits now: the best the free GPUs offer the job.
struct NoFit {
  int largest_free = 0;           // whole free GPUs of an allowed class on the best node
  std::optional<NodeIndex> node;  // that node, if any has one
  int largest_share_milli = 0;    // fractional jobs: the largest free share of a shared GPU
  int nodes_with_room = 0;        // gangs: nodes that could hold a member now
  // A node with the GPUs free but not the host CPUs or memory the job asks.
  std::optional<NodeIndex> short_of_host;
};

// Whether a class meets the job's memory and model constraints.
bool ClassAllowed(const GpuClass& c, const JobRequest& job);
// The classes the job may use, in class order.
std::vector<ClassId> AllowedClasses(const ClusterState& cluster, const JobRequest& job);

// Finds where the job can start now, on one node, all GPUs of one class:
// candidates come from the free-count buckets (tightest first, at most
// `candidate_limit` nodes, and as many shared GPUs for a fraction), the
// GPUs within a node from ChooseGpus; the job's runtime guess against the
// GPUs' expected quiet (WindowFit) ranks first, then the scorer's cost;
// ties go to the tighter GPU, then the lower node and GPU index. Cost: a few set look-ups
// plus `candidate_limit` scorings, whatever the cluster's size. With
// `may_take`, only GPUs it allows are taken; nodes where it leaves too few
// do not count against the limit.
std::optional<Placement> FindPlacement(const ClusterState& cluster, const JobRequest& job,
                                       const std::vector<ClassId>& allowed,
                                       const PlacementScorer& scorer, int candidate_limit,
                                       const GpuFilter* may_take = nullptr);

// The same search among `nodes` only (a reservation's few nodes), every
// GPU checked: for placing a job on the GPUs reserved for it.
std::optional<Placement> FindPlacementOnNodes(const ClusterState& cluster, const JobRequest& job,
                                              const std::vector<ClassId>& allowed,
                                              const PlacementScorer& scorer,
                                              const std::vector<NodeIndex>& nodes,
                                              const GpuFilter& may_take);

// What the free GPUs offer the job when FindPlacement found nothing.
NoFit DescribeNoFit(const ClusterState& cluster, const JobRequest& job,
                    const std::vector<ClassId>& allowed);

}  // namespace gleaner::sched
