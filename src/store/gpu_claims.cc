#include "store/gpu_claims.h"

#include <algorithm>

namespace gleaner::store {

namespace {

// Sorted, so that transactions claiming overlapping GPUs at once lock them
// in the same order (PostgreSQL would otherwise deadlock and abort one),
// and a refusal names the same GPU whichever order the caller listed.
std::vector<core::GpuUuid> Sorted(std::vector<core::GpuUuid> gpus) {
  std::sort(gpus.begin(), gpus.end());
  return gpus;
}

}  // namespace

bool HoldsGpus(JobState state) {
  return state == JobState::kRunning || state == JobState::kVacating;
}

std::optional<std::vector<core::GpuUuid>> ClaimsAfter(JobState from, JobState to,
                                                      const JobUpdate& update) {
  if (!HoldsGpus(to)) {
    if (HoldsGpus(from)) return std::vector<core::GpuUuid>{};
    return std::nullopt;
  }
  // A start without GPUs claims none, even though the record keeps the
  // GPUs of an earlier run.
  if (!HoldsGpus(from)) return Sorted(update.gpus.value_or(std::vector<core::GpuUuid>{}));
  if (update.gpus) return Sorted(*update.gpus);
  return std::nullopt;
}

core::Status GpuTaken(sched::JobId job, JobState from, const std::string& gpu,
                      sched::JobId holder) {
  return core::FailedPrecondition("GPU " + gpu + " is already assigned to job " +
                                  std::to_string(holder) + "; job " + std::to_string(job) +
                                  " stays " + std::string(JobStateName(from)));
}

}  // namespace gleaner::store
