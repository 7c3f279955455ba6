#pragma once

#include "sched/cluster_state.h"

namespace gleaner::agent {

// What this host's jobs may claim: the CPUs this process may run on (its
// affinity mask, so a daemon confined to some CPUs offers only those) and
// the host's memory (MemTotal), each replaced by `configured` where that is
// set ([host] in gleaner.toml). Zero where neither is known.
sched::HostResources HostResourcesForJobs(const sched::HostResources& configured);

}  // namespace gleaner::agent
