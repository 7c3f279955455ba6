#include "server/submit_policy.h"

#include <algorithm>

#include "core/format.h"

namespace gleaner::server {

namespace {

// Why `spec` breaks class rule `r` (`cls`), or Ok.
core::Status Breaks(const ClassRule& r, const std::string& cls, const Caller& caller,
                    const sched::JobSpec& spec, const GroupsOf& groups_of) {
  if (!caller.admin() && (!r.users.empty() || !r.groups.empty()) &&
      !ListedUser(caller.user, groups_of).In(r.users, r.groups)) {
    return core::PermissionDenied("priority_class: " + caller.user + " may not submit " + cls +
                                  " jobs ([rules.class." + cls +
                                  "] in gleaner.toml says who may); submit it as normal");
  }
  const int most = std::max(spec.gpus, spec.max_gpus);
  if (r.max_gpus > 0 && most > r.max_gpus) {
    return core::InvalidArgument("gpus: " + cls + " jobs may use at most " +
                                 std::to_string(r.max_gpus) + " GPUs; this one asks for " +
                                 std::to_string(most));
  }
  if (r.max_runtime > core::Duration{} && spec.max_runtime && *spec.max_runtime > r.max_runtime) {
    return core::InvalidArgument("max_runtime: " + cls + " jobs may run at most " +
                                 core::FormatDuration(r.max_runtime) + "; this one asks for " +
                                 core::FormatDuration(*spec.max_runtime));
  }
  return core::Status::Ok();
}

}  // namespace

core::Result<std::string> SubmitPolicy::Admit(const Caller& caller, sched::JobSpec* spec) const {
  GLEANER_ASSIGN_OR_RETURN(spec->project,
                           projects_.Resolve(caller.user, caller.admin(), spec->project));
  const auto rule = classes_.find(spec->priority_class);
  if (rule == classes_.end()) return std::string();
  const ClassRule& r = rule->second;
  const std::string cls(sched::PriorityClassName(spec->priority_class));
  const core::Status broken = Breaks(r, cls, caller, *spec, groups_of_);
  if (!broken.ok() && r.approval == ClassRule::Approval::kNever) return broken;
  // Bounded, as its class requires, whoever approves it.
  if (r.max_runtime > core::Duration{} && !spec->max_runtime) spec->max_runtime = r.max_runtime;
  // An approver's own job would be theirs to approve.
  if (MayApprove(caller, spec->project)) return std::string();
  const std::string who = ApproversOf(spec->project);
  const std::string wait = "waiting for approval by " + who + ": ";
  if (!broken.ok()) return wait + broken.message() + " ([rules.class." + cls + "] approval)";
  if (r.approval == ClassRule::Approval::kAlways) {
    return wait + cls + " jobs need an approver's yes ([rules.class." + cls +
           "] approval = \"always\")";
  }
  return std::string();
}

bool SubmitPolicy::MayApprove(const Caller& caller, const std::string& project) const {
  return caller.admin() ||
         (!caller.anonymous && !project.empty() && projects_.IsApprover(caller.user, project));
}

std::string SubmitPolicy::ApproversOf(const std::string& project) const {
  const std::string listed = projects_.ApproversOf(project);
  return listed.empty() ? "root" : listed + " (or root)";
}

}  // namespace gleaner::server
