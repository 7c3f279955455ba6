#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mutex.h"
#include "core/result.h"
#include "sched/job_spec.h"
#include "server/caller.h"
#include "server/project_membership.h"

namespace gleaner::server {

// [rules.class.NAME] of gleaner.toml: who may submit a priority class, and
// how large and long one of its jobs may be (docs/projects.md).
struct ClassRule {
  // Who may submit it; both empty: anyone.
  std::vector<std::string> users;
  std::vector<std::string> groups;
  int max_gpus = 0;              // per job, elastic maximum included; 0: no limit
  core::Duration max_runtime{};  // per job; zero: no limit
  // When a job of the class waits for an approver instead: never (what
  // breaks the rule is refused), over_limit (what breaks it waits), or
  // always (every job waits). Root's jobs and those of the project's
  // approvers never wait.
  enum class Approval { kNever, kOverLimit, kAlways };
  Approval approval = Approval::kNever;
  bool operator==(const ClassRule&) const = default;
};
// Header-only: the config reader (and its fuzzer) use it without the
// server library.
inline std::optional<ClassRule::Approval> ParseApproval(std::string_view name) {
  if (name == "never") return ClassRule::Approval::kNever;
  if (name == "over_limit") return ClassRule::Approval::kOverLimit;
  if (name == "always") return ClassRule::Approval::kAlways;
  return std::nullopt;
}

// [sessions] of gleaner.toml: what interactive sessions (`gleaner run
// --pty`) get, whatever their spec asks: a class (whose [rules.class]
// then bind them like any job) and a time limit, so a forgotten terminal
// never holds a GPU for long (docs/jobs.md).
struct SessionRule {
  sched::PriorityClass priority_class = sched::PriorityClass::kNormal;
  core::Duration max_runtime = core::Seconds(8 * 3600);  // also what one naming none gets
  bool operator==(const SessionRule&) const = default;
};

// What a submit must satisfy beyond a well-formed spec: its project
// (ProjectMembership) and its class's rules. Root is bound by the sizes
// but may use any class and project.
class SubmitPolicy {
 public:
  SubmitPolicy(ProjectMembership projects, std::map<sched::PriorityClass, ClassRule> classes,
               SessionRule sessions = {}, GroupsOf groups_of = UnixGroupsOf)
      : projects_(std::move(projects)),
        classes_(std::move(classes)),
        sessions_(sessions),
        groups_of_(std::move(groups_of)) {}

  // Gives a session its class and time limit ([sessions]), charges `spec`
  // to its project and bounds it by its class (a job of a
  // class with a runtime limit that names none gets the limit), or says
  // why it may not be submitted. Admitted, it is empty, or says which rule
  // makes the job wait for an approver, in words.
  core::Result<std::string> Admit(const Caller& caller, sched::JobSpec* spec) const;

  // Whether `caller` may approve or deny the jobs of `project`: root, and
  // the project's approvers.
  bool MayApprove(const Caller& caller, const std::string& project) const;
  // Who may, in words, for an error or a job's reason.
  std::string ApproversOf(const std::string& project) const;
  const ProjectMembership& projects() const { return projects_; }

 private:
  ProjectMembership projects_;
  std::map<sched::PriorityClass, ClassRule> classes_;
  SessionRule sessions_;
  GroupsOf groups_of_;
};

// Which names this host knows, for LockOuts.
struct HostNames {
  std::function<bool(const std::string&)> user_exists;
  std::function<bool(const std::string&)> group_exists;
};
HostNames ThisHostNames();  // the passwd and group databases

// What in these rules would leave nobody but root able to submit at all
// (projects enforced, and none has a member this host knows) or to use a
// priority class (its rule names users or groups, none known here): one
// line each, in words; empty when nothing would. Applying such a policy
// takes --force (docs/policy.md).
std::vector<std::string> LockOuts(const std::vector<ProjectRule>& projects,
                                  const std::map<sched::PriorityClass, ClassRule>& classes,
                                  const HostNames& names);

// The submit policy in force, swapped whole when a new policy version is
// applied: a submit uses the one it read, from start to end. Thread-safe.
class SubmitPolicySlot {
 public:
  explicit SubmitPolicySlot(std::shared_ptr<const SubmitPolicy> policy)
      : policy_(std::move(policy)) {}
  std::shared_ptr<const SubmitPolicy> Get() const {
    core::MutexLock lock(mu_);
    return policy_;
  }
  void Set(std::shared_ptr<const SubmitPolicy> policy) {
    core::MutexLock lock(mu_);
    policy_ = std::move(policy);
  }

 private:
  mutable core::Mutex mu_;
  // null: a well-formed spec is enough
  std::shared_ptr<const SubmitPolicy> policy_ GLEANER_GUARDED_BY(mu_);
};

}  // namespace gleaner::server
