#include "store/job_store.h"

namespace gleaner::store {

std::string_view JobStateName(JobState s) {
  switch (s) {
    case JobState::kPendingApproval:
      return "pending_approval";
    case JobState::kQueued:
      return "queued";
    case JobState::kHeld:
      return "held";
    case JobState::kRunning:
      return "running";
    case JobState::kVacating:
      return "vacating";
    case JobState::kSucceeded:
      return "succeeded";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "queued";
}

std::optional<JobState> ParseJobState(std::string_view name) {
  for (JobState s :
       {JobState::kPendingApproval, JobState::kQueued, JobState::kHeld, JobState::kRunning,
        JobState::kVacating, JobState::kSucceeded, JobState::kFailed, JobState::kCancelled}) {
    if (JobStateName(s) == name) return s;
  }
  return std::nullopt;
}

bool IsFinal(JobState s) {
  return s == JobState::kSucceeded || s == JobState::kFailed || s == JobState::kCancelled;
}

bool CanTransition(JobState from, JobState to) {
  using S = JobState;
  switch (from) {
    case S::kPendingApproval:
      return to == S::kQueued || to == S::kCancelled;
    case S::kQueued:
      return to == S::kRunning || to == S::kHeld || to == S::kCancelled;
    case S::kHeld:
      return to == S::kQueued || to == S::kCancelled;
    case S::kRunning:
      return to == S::kVacating || to == S::kSucceeded || to == S::kFailed || to == S::kCancelled ||
             to == S::kQueued;
    case S::kVacating:
      return to == S::kQueued || to == S::kFailed || to == S::kCancelled;
    default:
      return false;
  }
}

}  // namespace gleaner::store
