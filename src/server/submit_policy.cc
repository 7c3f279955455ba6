#include "server/submit_policy.h"

#include <grp.h>
#include <pwd.h>

#include <algorithm>
#include <cerrno>

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
  // Checked before the spec's ranges are (ValidateJobSpec): a million GPUs
  // on each of a million nodes must not overflow.
  const int64_t most = int64_t{std::max(spec.gpus, spec.max_gpus)} * spec.nodes;
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
  if (spec->pty) {
    spec->priority_class = sessions_.priority_class;
    spec->preemptible = spec->priority_class != sched::PriorityClass::kCritical;
    if (!spec->max_runtime) spec->max_runtime = sessions_.max_runtime;
    if (*spec->max_runtime > sessions_.max_runtime) {
      return core::InvalidArgument(
          "interactive sessions may run at most " + core::FormatDuration(sessions_.max_runtime) +
          " here ([sessions] max_runtime_s in gleaner.toml); this one asks for " +
          core::FormatDuration(*spec->max_runtime) +
          ": ask less with --max-runtime, or submit "
          "the work as a batch job");
    }
  }
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

namespace {

// Whether `lookup` (getpwnam_r, getgrnam_r) finds `name`, with a buffer as
// large as the entry needs (a directory's group may list thousands).
template <typename Entry, typename Lookup>
bool Found(const std::string& name, Lookup lookup) {
  for (size_t size = 16384; size <= (size_t{64} << 20); size *= 4) {
    std::vector<char> buf(size);
    Entry entry{};
    Entry* found = nullptr;
    const int rc = lookup(name.c_str(), &entry, buf.data(), buf.size(), &found);
    if (rc != ERANGE) return rc == 0 && found != nullptr;
  }
  return false;
}

}  // namespace

HostNames ThisHostNames() {
  return {[](const std::string& user) { return Found<passwd>(user, getpwnam_r); },
          [](const std::string& name) { return Found<group>(name, getgrnam_r); }};
}

std::vector<std::string> LockOuts(const std::vector<ProjectRule>& projects,
                                  const std::map<sched::PriorityClass, ClassRule>& classes,
                                  const HostNames& names) {
  const auto any_known = [&](const std::vector<std::string>& users,
                             const std::vector<std::string>& groups) {
    return std::any_of(users.begin(), users.end(), names.user_exists) ||
           std::any_of(groups.begin(), groups.end(), names.group_exists);
  };
  std::vector<std::string> out;
  if (!projects.empty() && std::none_of(projects.begin(), projects.end(), [&](const auto& p) {
        return any_known(p.users, p.groups);
      })) {
    out.push_back(
        "projects are enforced, but no [projects.NAME] has a user or group this host knows: "
        "every submit but root's would be refused");
  }
  for (const auto& [cls, rule] : classes) {
    // Nobody named (anyone), or those not named wait for an approver.
    if ((rule.users.empty() && rule.groups.empty()) ||
        rule.approval != ClassRule::Approval::kNever || any_known(rule.users, rule.groups)) {
      continue;
    }
    const std::string name(sched::PriorityClassName(cls));
    out.push_back("[rules.class." + name + "] names no user or group this host knows: only root " +
                  "could submit " + name + " jobs");
  }
  return out;
}

}  // namespace gleaner::server
