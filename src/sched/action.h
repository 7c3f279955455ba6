#pragma once

#include <string>
#include <variant>
#include <vector>

#include "core/ids.h"
#include "sched/job_request.h"

namespace gleaner::sched {

// What the scheduler asks for. The caller carries each out and reports the
// outcome as an event.

// Start the job on these GPUs of one node, or of each node of a gang.
// `gpu_milli` below 1000: the job shares its one GPU and must keep to that
// share.
struct StartJob {
  JobId job = 0;
  core::NodeId node;  // a gang's rank 0
  std::vector<core::GpuUuid> gpus;
  std::vector<int> gpu_indices;  // NVML indices on their nodes, in the same order
  int gpu_milli = 1000;
  std::string why;  // why these GPUs, where a preference beyond fit chose them; often empty
  // A gang over several nodes: each, in rank order (`node` first), and
  // `gpus` holds the same number of each, node by node. Empty: one node.
  std::vector<core::NodeId> gang = {};
};
// Give the GPUs back: checkpoint signal, grace, kill (see VacatePlanner),
// then report JobFailed (or JobFinished if it completed meanwhile); the
// scheduler then requeues it.
struct PreemptJob {
  JobId job = 0;
  std::string reason;
};
// Shrink an elastic job: it gives up all its GPUs but `gpus` (on the same
// node) and carries on there, then the caller reports JobResized. The
// daemon may do this as a preemption (checkpoint signal, grace, kill) and
// a restart on `gpus` at once, without requeueing.
struct ResizeJob {
  JobId job = 0;
  core::NodeId node;
  std::vector<core::GpuUuid> gpus;  // the ones it keeps
  std::vector<int> gpu_indices;
  std::string reason;
};
// The job is pending again (it was preempted, or its node was lost).
struct RequeueJob {
  JobId job = 0;
  std::string reason;
};
// The job can never run here as asked; the reason says what to change.
struct RejectJob {
  JobId job = 0;
  std::string reason;
};

using Action = std::variant<StartJob, PreemptJob, ResizeJob, RequeueJob, RejectJob>;

// One line per action, the form scenario files expect:
//   start job 3 on host-a gpus 0,1 [milli 500]
//   preempt job 4: <reason>     requeue job 4: <reason>     reject job 5: <reason>
//   resize job 6 to host-a gpus 0,1: <reason>
std::string ToString(const Action& action);

}  // namespace gleaner::sched
