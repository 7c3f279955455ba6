#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "sched/cluster_state.h"

namespace gleaner::sched {

// Which GPUs of a node a job gets, and what that does to the node's NVLink
// islands (sets of GPUs all connected by NVLink).
struct GpuChoice {
  std::vector<GpuIndex> gpus;     // in the node's order
  bool within_one_island = true;  // all chosen GPUs talk over NVLink (always for one GPU)
  int islands_broken = 0;         // islands that were wholly free and are now partly used
};

// Which GPUs a job may take beyond class and free capacity (reservations
// keep some GPUs from some jobs). A null filter allows every GPU.
using GpuFilter = std::function<bool(GpuIndex)>;

// Chooses `count` whole, free, lendable GPUs of class `c` on node `n`,
// topology first: the fullest-used island that still holds the whole gang
// (so intact islands stay intact for the gangs that need them), else whole
// islands, largest first, and the rest from the tightest island. Nullopt
// when the node has fewer than `count` such GPUs that `may_take` allows.
// With a `runtime` guess, among islands equal in topology and within an
// island, GPUs whose expected quiet fits it better come first (WindowFit).
// Deterministic.
std::optional<GpuChoice> ChooseGpus(const ClusterState& cluster, NodeIndex n, ClassId c, int count,
                                    const GpuFilter* may_take = nullptr,
                                    core::Duration runtime = {});

}  // namespace gleaner::sched
