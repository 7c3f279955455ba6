#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/cluster_state.h"
#include "sched/gpu_choice.h"
#include "sched/job_request.h"
#include "sched/placement.h"

namespace gleaner::sched {

// Placing a gang over several nodes (JobRequest::nodes > 1): `gpus` whole
// free GPUs of one class on each of `nodes` distinct nodes, all or nothing.
// Nodes under one rack label are preferred: among the racks that can hold
// the whole gang, the one with the fewest nodes that could (larger racks
// stay whole for larger gangs), and within it the tightest nodes (fewest
// free GPUs), each node's GPUs chosen by ChooseGpus. Where no rack can, and
// the job does not insist on one (`one_rack`), it spans the fewest racks,
// fullest first. The placement's GPUs are node by node in rank order (rank
// 0 first); its `why` says when it spans racks. Cost: a walk over the
// nodes with room (the free-count buckets name them) and one ChooseGpus
// per node taken. Deterministic.
std::optional<Placement> FindGangPlacement(const ClusterState& cluster, const JobRequest& job,
                                           const std::vector<ClassId>& allowed,
                                           const GpuFilter* may_take = nullptr);

// Why the gang can never run here, or empty: it needs more nodes with
// `gpus` GPUs of one allowed class than the cluster has, or, with
// `one_rack`, than any rack has. Counted from the cluster's index; with
// `one_rack`, by a scan of every node (submit time only).
std::string GangRejection(const ClusterState& cluster, const JobRequest& job,
                          const std::vector<ClassId>& allowed);

// How many live nodes hold `gpus` whole free GPUs of one allowed class now,
// and the host CPUs and memory it asks (the most over the classes): what a
// waiting gang is told.
int NodesWithRoom(const ClusterState& cluster, const JobRequest& job,
                  const std::vector<ClassId>& allowed);

}  // namespace gleaner::sched
