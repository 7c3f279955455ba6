// The Scheduler's queue bookkeeping: order keys, charges for use, and the
// job shapes and likenesses that let a pass skip alike jobs.
#include "sched/scheduler.h"

namespace gleaner::sched {

// ---- preemption ---------------------------------------------------------

OrderKey Scheduler::FreshKey(const Job& job, double project_factor, double user_factor) const {
  OrderKey key =
      policies_.ordering->Key({&job.req, job.submitted_at, now_, project_factor, user_factor});
  key.id = job.req.id;  // keeps keys unique whatever the policy returns
  return key;
}

void Scheduler::Enqueue(Job& job) {
  job.key = FreshKey(job, project_usage_.Factor(job.req.project), user_usage_.Factor(job.req.user));
  if (job.queue_group < 0) job.queue_group = queue_.GroupOf(job.req, LikenessOf(job.req));
  queue_.Add(job.queue_group, job.req, job.submitted_at, job.key);
  const auto shape = static_cast<size_t>(job.shape_id);
  if (queued_of_shape_.size() <= shape) queued_of_shape_.resize(shape + 1, 0);
  if (queued_of_shape_[shape]++ == 0) ++waiting_shapes_;
  if (job.req.expected_runtime) ++pending_with_runtime_;
}

void Scheduler::Dequeue(const Job& job) {
  queue_.Remove(job.queue_group, job.req, job.submitted_at, job.key);
  if (--queued_of_shape_[static_cast<size_t>(job.shape_id)] == 0) --waiting_shapes_;
  if (job.req.expected_runtime) --pending_with_runtime_;
}

void Scheduler::Charge(Job& job, core::TimePoint until) {
  if (until <= job.charged_until) return;
  const double milli_s =
      core::ToSecondsDouble(until - job.charged_until) * static_cast<double>(HeldMilli(job));
  if (!job.project_account) {
    job.project_account = project_usage_.HandleOf(job.req.project);
    job.user_account = user_usage_.HandleOf(job.req.user);
  }
  project_usage_.Charge(job.project_account, milli_s);
  user_usage_.Charge(job.user_account, milli_s);
  job.charged_until = until;
}

const std::vector<ClassId>& Scheduler::Allowed(Job& job) {
  if (job.allowed_for_classes != cluster_.class_count()) {
    job.allowed = AllowedClasses(cluster_, job.req);
    job.allowed_for_classes = cluster_.class_count();
  }
  return job.allowed;
}

int Scheduler::ShapeOf(const JobRequest& req) {
  auto [it, added] = shapes_.try_emplace(FitShape::Of(req), static_cast<int>(shapes_.size()));
  return it->second;
}

int Scheduler::LikenessOf(const JobRequest& req) {
  auto key = std::make_tuple(ShapeOf(req), req.preemptible,
                             req.expected_runtime ? req.expected_runtime->count() : int64_t{-1});
  auto [it, added] = likenesses_.try_emplace(key, static_cast<int>(likenesses_.size()));
  return it->second;
}

// ---- queries ------------------------------------------------------------

}  // namespace gleaner::sched
