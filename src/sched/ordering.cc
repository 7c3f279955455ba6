#include "sched/ordering.h"

#include <algorithm>

namespace gleaner::sched {

OrderKey PriorityFifoOrdering::Key(const OrderingInput& in) const {
  return {ClassRank(in.job->priority_class), static_cast<double>(in.job->priority), in.submitted_at,
          in.job->id};
}

OrderKey MultifactorOrdering::Key(const OrderingInput& in) const {
  const double priority = (std::clamp(in.job->priority, -1000, 1000) + 1000) / 2000.0;
  double age = 0;
  if (w_.age_horizon > core::Duration{} && in.now > in.submitted_at) {
    age = std::min(1.0, core::ToSecondsDouble(in.now - in.submitted_at) /
                            core::ToSecondsDouble(w_.age_horizon));
  }
  const double fair_share = (in.project_fair_share + in.user_fair_share) / 2;
  const double score = w_.priority * priority + w_.age * age + w_.fair_share * fair_share;
  return {ClassRank(in.job->priority_class), score, in.submitted_at, in.job->id};
}

}  // namespace gleaner::sched
