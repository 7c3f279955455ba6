#include "server/submit_policy.h"

#include <algorithm>

#include "core/format.h"

namespace gleaner::server {

core::Status SubmitPolicy::Admit(const Caller& caller, sched::JobSpec* spec) const {
  GLEANER_ASSIGN_OR_RETURN(spec->project,
                           projects_.Resolve(caller.user, caller.admin(), spec->project));
  const auto rule = classes_.find(spec->priority_class);
  if (rule == classes_.end()) return core::Status::Ok();
  const ClassRule& r = rule->second;
  const std::string cls(sched::PriorityClassName(spec->priority_class));
  if (!caller.admin() && (!r.users.empty() || !r.groups.empty()) &&
      !ListedUser(caller.user, groups_of_).In(r.users, r.groups)) {
    return core::PermissionDenied("priority_class: " + caller.user + " may not submit " + cls +
                                  " jobs ([rules.class." + cls +
                                  "] in gleaner.toml says who may); submit it as normal");
  }
  const int most = std::max(spec->gpus, spec->max_gpus);
  if (r.max_gpus > 0 && most > r.max_gpus) {
    return core::InvalidArgument("gpus: " + cls + " jobs may use at most " +
                                 std::to_string(r.max_gpus) + " GPUs; this one asks for " +
                                 std::to_string(most));
  }
  if (r.max_runtime > core::Duration{}) {
    if (!spec->max_runtime) {
      spec->max_runtime = r.max_runtime;  // bounded, as its class requires
    } else if (*spec->max_runtime > r.max_runtime) {
      return core::InvalidArgument("max_runtime: " + cls + " jobs may run at most " +
                                   core::FormatDuration(r.max_runtime) + "; this one asks for " +
                                   core::FormatDuration(*spec->max_runtime));
    }
  }
  return core::Status::Ok();
}

}  // namespace gleaner::server
