#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/units.h"
#include "slurm/allocation.h"

namespace gleaner::slurm {

// What gleaner does, opt-in, to a Slurm job that leaves every GPU it holds
// here unused: requeue it (Slurm runs it again later) or cancel it, as
// sites' "job defense" scripts do after mailing the owner.
enum class IdleAction { kNone, kRequeue, kCancel };
std::string_view IdleActionName(IdleAction action);  // "none", "requeue", "cancel"

struct IdleActionRule {
  IdleAction action = IdleAction::kNone;
  // Every allocated GPU unused this long; the owner's alert
  // (IdleAllocationRule::after) comes first and is the notice.
  core::Duration after = std::chrono::hours(2);
};

struct PlannedIdleAction {
  JobOnHost job;
  IdleAction action = IdleAction::kNone;
  std::string reason;  // "all 4 GPUs unused for 2h03m (after 2h)"
};

// Chooses the jobs to act on, each once per run of the job (a requeued job
// that idles again is acted on again). Only a job whose whole allocation is
// on this host: another node's GPUs may be busy. A job's idleness is its
// own: counted from the later of its start and the first time this object
// saw this run of it (a restart, or a Slurm that gives no start time), never
// from before it held the GPU. Pure.
class IdleAllocationActions {
 public:
  explicit IdleAllocationActions(IdleActionRule rule) : rule_(rule) {}
  // `alerted`: Slurm job ids whose owner's alert fires now; only those are
  // acted on. `exempt`: ids never acted on (gleaner's own bridged jobs).
  std::vector<PlannedIdleAction> Decide(const std::vector<JobOnHost>& jobs, core::TimePoint now,
                                        const std::set<std::string>& alerted,
                                        const std::set<std::string>& exempt = {});

 private:
  IdleActionRule rule_;
  std::map<std::string, core::TimePoint> first_seen_;  // by "id/restarts"
  std::set<std::string> acted_;                        // "id/restarts"
};

}  // namespace gleaner::slurm
