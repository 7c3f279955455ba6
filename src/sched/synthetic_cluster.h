#pragma once

#include <string>

#include "core/ids.h"
#include "sched/cluster_state.h"
#include "sched/job_request.h"

namespace gleaner::sched {

// Synthetic clusters and jobs for benchmarks (`gleaner bench sched`):
// uniform nodes of H100s on one NVSwitch (one NVLink
// island per node), jobs spread over 7 projects and (by default) 101 users so that fair
// share has work to do. Deterministic: the same arguments give the same
// specs.

// "GPU-<node>-<index>".
core::GpuUuid SyntheticGpuUuid(int node, int index);

// "node-<n>" with `gpus` GPUs, all lendable or none.
NodeSpec SyntheticNode(int node, int gpus, bool lendable);

// A job of `gpus` whole GPUs in project p<id % 7>, user u<id % users>.
JobRequest SyntheticJob(JobId id, int gpus, PriorityClass priority_class = PriorityClass::kNormal,
                        int users = 101);

}  // namespace gleaner::sched
