#pragma once

// Internal to the store backends: which GPUs a job claims in the table
// gpu_claims, whose primary key (the GPU) is how the database refuses to
// give one GPU to two jobs at once. Both backends apply the same rules.

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/job_store.h"

namespace gleaner::store {

// Whether a job in `state` holds its GPUs: running, or vacating (leaving
// them, but its processes are still on them).
bool HoldsGpus(JobState state);

// The GPUs `update` makes the job claim as it moves from `from` to `to`, in
// the transaction of the move: all it claimed before is released first.
// nullopt: its claims stay as they are (running -> vacating, or a move
// between states that hold none). A start claims exactly update.gpus.
// Sorted: claims are made in this order.
std::optional<std::vector<core::GpuUuid>> ClaimsAfter(JobState from, JobState to,
                                                      const JobUpdate& update);

// kFailedPrecondition, as for a lost compare-and-set: "GPU GPU-b is already
// assigned to job 7; job 8 stays queued".
core::Status GpuTaken(sched::JobId job, JobState from, const std::string& gpu, sched::JobId holder);

}  // namespace gleaner::store
