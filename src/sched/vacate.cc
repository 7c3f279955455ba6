#include "sched/vacate.h"

namespace gleaner::sched {

std::vector<VacateAction> VacatePlanner::Plan(const std::vector<RunningOnGpus>& running,
                                              const std::map<core::GpuUuid, GpuClaim>& claims,
                                              core::TimePoint now) {
  std::vector<VacateAction> actions;
  for (const RunningOnGpus& job : running) {
    auto v = vacating_.find(job.id);
    if (v == vacating_.end()) {
      for (const core::GpuUuid& gpu : job.gpus) {
        auto claim = claims.find(gpu);
        if (claim == claims.end()) continue;
        const std::string reason = gpu.str() + ": " + claim->second.reason;
        vacating_[job.id] = {now, now + job.grace, reason, false};
        actions.push_back({VacateAction::Kind::kCheckpoint, job.id, job.checkpoint_signal, reason});
        if (job.grace <= core::Duration{}) {
          vacating_[job.id].killed = true;
          actions.push_back({VacateAction::Kind::kKill, job.id, 9, reason + " (no grace)"});
        }
        break;
      }
    } else if (!v->second.killed && now >= v->second.kill_at) {
      v->second.killed = true;
      actions.push_back({VacateAction::Kind::kKill, job.id, 9,
                         v->second.reason + " (grace of " +
                             std::to_string(job.grace.count() / 1'000'000) + " s over)"});
    }
  }
  return actions;
}

std::string VacatePlanner::Reason(JobId job) const {
  auto it = vacating_.find(job);
  return it == vacating_.end() ? "" : it->second.reason;
}

std::optional<core::TimePoint> VacatePlanner::Since(JobId job) const {
  auto it = vacating_.find(job);
  if (it == vacating_.end()) return std::nullopt;
  return it->second.since;
}

}  // namespace gleaner::sched
