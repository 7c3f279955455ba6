#pragma once

#include <cstdint>
#include <string>

#include "sched/cluster_state.h"
#include "sched/job_request.h"
#include "sched/placement.h"

namespace gleaner::sched {

// Why a pending job did not start in the pass that last considered it.
// Kept as numbers and rendered on demand (DescribeWait), so a pass over
// 100,000 jobs formats no text.
struct WaitReason {
  enum class Kind {
    kNotConsidered,    // no pass has reached it yet
    kNoNodes,          // the cluster is empty
    kNoFit,            // `fit` says what the free GPUs offer
    kQuota,            // its project is at its limit
    kAwaitingVictims,  // jobs were preempted for it and are still leaving
  };
  Kind kind = Kind::kNotConsidered;
  NoFit fit;
  int64_t quota_used_milli = 0;
  int64_t quota_limit_milli = 0;
  int victims = 0;
  // kNoFit: the free GPUs that would fit it are held by this reservation
  // (a ReservationBook slot) for another project; -1: not so.
  int reserved_by = -1;
  // kNoFit: the free GPUs that would fit it are kept by backfill for this
  // job, which should fit by `kept_until` (unset: not known, a job in the
  // way has no expected runtime); 0: not so.
  JobId kept_for = 0;
  std::optional<core::TimePoint> kept_until = std::nullopt;
};

// "needs 4 GPUs on one node; the largest free set is 2 on host-a", with the
// job's constraints and limits in the words a user would change.
std::string DescribeWait(const WaitReason& why, const JobRequest& job, const ClusterState& cluster);

// "4 GPUs", "1 GPU", "0.25 of a GPU (250 milli)", with " (model H100, at
// least 80 GiB)" when constrained.
std::string DescribeNeed(const JobRequest& job);

// "2.5" for 2500 milli-GPU; whole numbers without a fraction.
std::string MilliAsGpus(int64_t milli);
// "1 CPU", "2.5 CPUs" for thousandths of a CPU.
std::string CpusText(int64_t milli);

}  // namespace gleaner::sched
