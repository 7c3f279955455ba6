#include "core/enum_names.h"
#include "store/job_store.h"

namespace gleaner::store {

constexpr auto kJobStateNames = core::MakeEnumNames<JobState>(
    {
        {JobState::kPendingApproval, "pending_approval"},
        {JobState::kQueued, "queued"},
        {JobState::kHeld, "held"},
        {JobState::kRunning, "running"},
        {JobState::kVacating, "vacating"},
        {JobState::kSucceeded, "succeeded"},
        {JobState::kFailed, "failed"},
        {JobState::kCancelled, "cancelled"},
    },
    "queued");

std::string_view JobStateName(JobState s) { return kJobStateNames.Name(s); }

std::optional<JobState> ParseJobState(std::string_view name) { return kJobStateNames.Parse(name); }

bool IsFinal(JobState s) {
  return s == JobState::kSucceeded || s == JobState::kFailed || s == JobState::kCancelled;
}

void DependencyStates::Add(sched::JobId id, std::optional<sched::JobId> array_id, JobState state) {
  if (array_id && ids_.contains(*array_id)) arrays_[*array_id].push_back(state);
  if (ids_.contains(id)) own_[id] = state;
}

std::map<sched::JobId, JobState> DependencyStates::Take() {
  std::map<sched::JobId, JobState> out = std::move(own_);
  for (const auto& [array, tasks] : arrays_) {
    JobState whole = JobState::kSucceeded;
    for (JobState task : tasks) {
      if (!IsFinal(task)) {
        whole = task;
        break;
      }
      if (task == JobState::kFailed) {
        whole = JobState::kFailed;
      } else if (task == JobState::kCancelled && whole == JobState::kSucceeded) {
        whole = JobState::kCancelled;
      }
    }
    out[array] = whole;
  }
  return out;
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
