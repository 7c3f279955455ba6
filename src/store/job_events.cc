#include "store/event_store.h"
#include "store/row_codec.h"

namespace gleaner::store {

std::string_view EventOfMove(JobState from, JobState to) {
  using S = JobState;
  if (from == S::kPendingApproval) return to == S::kQueued ? "approved" : "denied";
  switch (to) {
    case S::kRunning:
      return "started";
    case S::kVacating:
      return "vacating";
    case S::kQueued:
      return from == S::kHeld ? "released" : "requeued";
    default:
      return JobStateName(to);
  }
}

std::string SubmittedDetail(const NewJob& job) {
  const sched::JobSpec& s = job.spec;
  std::string detail = std::to_string(s.gpus) + " GPU(s), " +
                       std::string(sched::PriorityClassName(s.priority_class));
  if (!s.project.empty()) detail += ", project " + s.project;
  if (!job.approval.empty()) detail += "; " + job.approval;
  return detail;
}

JobRecord NewRecord(const NewJob& job, int64_t task, core::TimePoint now) {
  JobRecord r;
  r.user = job.user;
  r.uid = job.uid;
  r.spec = job.spec;
  r.submitted_at = now;
  if (job.spec.array) r.array_index = job.spec.array->first + task * job.spec.array->step;
  if (!job.approval.empty()) {
    r.state = JobState::kPendingApproval;
    r.reason = job.approval;
  }
  return r;
}

}  // namespace gleaner::store
