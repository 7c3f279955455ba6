#include "server/submit_quota.h"

#include "store/job_json.h"

namespace gleaner::server {

namespace {

// `held` plus `add` within `limit` (0: none)?
bool Within(int64_t held, int64_t add, int64_t limit) { return limit == 0 || held + add <= limit; }

std::string MiB(int64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

// Why the `kind` ("user" or "project") `name` may not queue `tasks` more
// tasks of `bytes` in all, or OK.
core::Status Check(const std::string& kind, const std::string& name, const store::ActiveUsage& held,
                   int64_t tasks, int64_t bytes, int64_t max_jobs, int64_t max_bytes) {
  const std::string who = kind + " " + name;
  const std::string fix = "; cancel some or wait for them to end, or ask an admin to raise ";
  if (!Within(held.jobs, tasks, max_jobs)) {
    // A count stops one past the limit: more than that is all it knows.
    const std::string has =
        held.jobs > max_jobs ? "more than " + std::to_string(max_jobs) : std::to_string(held.jobs);
    return core::ResourceExhausted(who + " has " + has + " jobs not yet ended, and " +
                                   std::to_string(tasks) + " more would pass the limit of " +
                                   std::to_string(max_jobs) + fix + "[limits] jobs_per_" + kind);
  }
  if (!Within(held.spec_bytes, bytes, max_bytes)) {
    return core::ResourceExhausted(who + "'s jobs not yet ended hold " + MiB(held.spec_bytes) +
                                   " of specs, and " + MiB(bytes) +
                                   " more would pass the limit of " + MiB(max_bytes) + fix +
                                   "[limits] spec_mib_per_" + kind);
  }
  return core::Status::Ok();
}

}  // namespace

core::Status SubmitQuota::Admit(const store::NewJob& job) {
  const int64_t tasks = store::TaskCount(job.spec);
  const int64_t bytes = tasks * static_cast<int64_t>(store::StoredSpecText(job.spec).size());
  // Past a job limit, one job more than it settles the answer; a bytes
  // limit alone needs them all.
  const auto at_most = [](int64_t max_jobs) { return max_jobs > 0 ? max_jobs + 1 : 0; };
  store::ActiveUsage* user = nullptr;
  if (limits_.jobs_per_user > 0 || limits_.spec_bytes_per_user > 0) {
    auto it = users_.find(job.uid);
    if (it == users_.end()) {
      GLEANER_ASSIGN_OR_RETURN(store::ActiveUsage held,
                               jobs_.UsageOfUser(job.uid, at_most(limits_.jobs_per_user)));
      it = users_.emplace(job.uid, held).first;
    }
    GLEANER_RETURN_IF_ERROR(Check("user", job.user, it->second, tasks, bytes, limits_.jobs_per_user,
                                  limits_.spec_bytes_per_user));
    user = &it->second;
  }
  // Jobs without a project count against their user only.
  store::ActiveUsage* project = nullptr;
  if (!job.spec.project.empty() &&
      (limits_.jobs_per_project > 0 || limits_.spec_bytes_per_project > 0)) {
    auto it = projects_.find(job.spec.project);
    if (it == projects_.end()) {
      GLEANER_ASSIGN_OR_RETURN(
          store::ActiveUsage held,
          jobs_.UsageOfProject(job.spec.project, at_most(limits_.jobs_per_project)));
      it = projects_.emplace(job.spec.project, held).first;
    }
    GLEANER_RETURN_IF_ERROR(Check("project", job.spec.project, it->second, tasks, bytes,
                                  limits_.jobs_per_project, limits_.spec_bytes_per_project));
    project = &it->second;
  }
  for (store::ActiveUsage* held : {user, project}) {
    if (held == nullptr) continue;
    held->jobs += tasks;
    held->spec_bytes += bytes;
  }
  return core::Status::Ok();
}

}  // namespace gleaner::server
