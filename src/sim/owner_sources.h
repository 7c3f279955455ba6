#pragma once

#include <vector>

#include "core/result.h"
#include "sim/helios_trace.h"
#include "sim/owner_timeline.h"
#include "sim/philly_trace.h"

namespace gleaner::sim {

// Owner timelines from the per-minute cluster traces. A minute's row stands
// for that minute: where the next row is further than two minutes away,
// and on Philly's gap rows (active = 0, a telemetry gap), the units have no
// data: neither idle capacity nor lendable.

// The Helios VCs side by side, each in nodes of `gpus_per_node` (the trace
// does not say how its GPUs are split into nodes): the owner holds
// running_gpu_num GPUs, idle_gpu_num more are free, the rest (down, or
// not offered) have no data.
core::Result<OwnerTimeline> TimelineFromHelios(const std::vector<HeliosVc>& vcs, int gpus_per_node);

// Philly's machines, in the machine list's order, as whole-node units: the
// owner holds active_nodes of the total_nodes counted that minute.
core::Result<OwnerTimeline> TimelineFromPhilly(const PhillyNodeSequence& sequence,
                                               const std::vector<PhillyMachine>& machines);

}  // namespace gleaner::sim
