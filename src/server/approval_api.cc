#include "server/approval_api.h"

#include <algorithm>

#include "core/json_depth.h"
#include "server/routing.h"
#include "store/job_json.h"

namespace gleaner::server {

using nlohmann::json;

bool ApprovalApi::MayDecide(const Caller& caller, const store::JobRecord& job) const {
  if (!caller.ActsFor(job.spec.project)) return false;
  if (caller.admin()) return true;
  const auto policy = policy_ != nullptr ? policy_->Get() : nullptr;
  return policy != nullptr && policy->MayApprove(caller, job.spec.project);
}

std::vector<std::string> ApprovalApi::Concerned(const store::JobRecord& job) const {
  std::vector<std::string> users = {job.user};
  if (const auto policy = policy_ != nullptr ? policy_->Get() : nullptr) {
    for (const std::string& a : policy->projects().ApproverNames(job.spec.project)) {
      if (std::find(users.begin(), users.end(), a) == users.end()) users.push_back(a);
    }
  }
  return users;
}

void ApprovalApi::Requested(const store::JobRecord& job, size_t tasks) {
  if (!notify_) return;
  const std::string what =
      tasks > 1 ? "array " + std::to_string(job.id) + " (" + std::to_string(tasks) + " tasks)"
                : "job " + std::to_string(job.id);
  notify_({"approval_requested", job.id, job.spec.project, Concerned(job),
           what + " of " + job.user + " is " + job.reason + "; decide with `gleaner approve " +
               std::to_string(job.id) + "` or `gleaner deny " + std::to_string(job.id) + "`"});
}

HttpResponse ApprovalApi::List(const HttpRequest& request, const Caller& caller) {
  if (request.method != "GET") return WrongMethod(request);
  if (caller.anonymous) return ErrorResponse(core::Unauthenticated("approvals need a token"));
  // Pages of the waiting jobs, keeping those the caller may decide; the
  // answer is bounded as a job listing is.
  constexpr int64_t kMaxListed = 1000;
  store::JobQuery q;
  q.states = {store::JobState::kPendingApproval};
  q.limit = kMaxListed;
  json doc = {{"jobs", json::array()}};
  for (;;) {
    auto page = [&] {
      core::MutexLock lock(store_mu_);
      return jobs_.Find(q);
    }();
    if (!page.ok()) return ErrorResponse(page.status());
    for (const store::JobRecord& job : *page) {
      if (!MayDecide(caller, job)) continue;
      if (static_cast<int64_t>(doc["jobs"].size()) == kMaxListed) {
        doc["truncated"] = true;  // decide these first
        return Json(200, doc);
      }
      json entry = store::JobRecordToJson(job);
      entry["spec"].erase("env");  // what to approve, not the submitter's secrets
      doc["jobs"].push_back(std::move(entry));
    }
    if (static_cast<int64_t>(page->size()) < q.limit) return Json(200, doc);
    q.after = page->back().id;
  }
}

HttpResponse ApprovalApi::Decide(const HttpRequest& request, const Caller& caller,
                                 const store::JobRecord& job, bool approve) {
  if (request.method != "POST") return WrongMethod(request);
  const std::string verb = approve ? "approve" : "deny";
  if (caller.anonymous) return ErrorResponse(core::Unauthenticated(verb + " needs a token"));
  if (!MayDecide(caller, job)) {
    const auto policy = policy_ != nullptr ? policy_->Get() : nullptr;
    const std::string who = policy != nullptr ? policy->ApproversOf(job.spec.project) : "root";
    return ErrorResponse(core::PermissionDenied(
        caller.user + " may not " + verb + " job " + std::to_string(job.id) + ": only " + who +
        " may" + (job.spec.project.empty() ? "" : " (project " + job.spec.project + ")")));
  }
  std::string why;
  if (!request.body.empty()) {
    const json body = core::ParseUntrustedJson<json>(request.body);
    if (body.is_discarded() || !body.is_object()) {
      return ErrorResponse(core::InvalidArgument("the body is not a JSON object"));
    }
    for (const auto& [key, value] : body.items()) {
      if (key != "reason") {
        return ErrorResponse(
            core::InvalidArgument("unknown field \"" + key.substr(0, 64) + "\"; expected reason"));
      }
      if (!value.is_string() || value.get<std::string>().size() > 1000) {
        return ErrorResponse(core::InvalidArgument("reason: expected text of at most 1000 bytes"));
      }
      why = value.get<std::string>();
    }
  }
  store::JobUpdate u;
  u.actor = caller.user;
  u.at = clock_.Now();
  u.reason = std::string(approve ? "approved" : "denied") + " by " + caller.user +
             (why.empty() ? "" : ": " + why);
  auto moved = [&] {
    core::MutexLock lock(store_mu_);
    return jobs_.Transition(job.id, store::JobState::kPendingApproval,
                            approve ? store::JobState::kQueued : store::JobState::kCancelled, u);
  }();
  if (!moved.ok()) {
    if (moved.status().code() != core::StatusCode::kFailedPrecondition) {
      return ErrorResponse(moved.status());
    }
    // Decided already, expired, or never waited: say which.
    auto now = [&] {
      core::MutexLock lock(store_mu_);
      return jobs_.Get(job.id);
    }();
    const std::string state =
        now.ok() ? std::string(store::JobStateName(now->state)) + " (" + now->reason + ")"
                 : moved.status().message();
    return ErrorResponse(core::FailedPrecondition("job " + std::to_string(job.id) +
                                                  " is not waiting for approval: it is " + state));
  }
  if (approve && queue_changed_) queue_changed_();
  if (notify_) {
    notify_({approve ? "approved" : "denied", job.id, job.spec.project, Concerned(job),
             "job " + std::to_string(job.id) + " of " + job.user + " " + u.reason});
  }
  return Json(200, store::JobRecordToJson(*moved));
}

}  // namespace gleaner::server
