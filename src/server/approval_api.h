#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/mutex.h"
#include "server/caller.h"
#include "server/http_message.h"
#include "server/submit_policy.h"
#include "store/job_store.h"

namespace gleaner::server {

// A job's approval, for the people it concerns: requested (to the
// approvers), approved or denied (to the submitter too).
struct ApprovalNotice {
  std::string kind;  // approval_requested, approved, denied
  sched::JobId job = 0;
  std::string project;
  std::vector<std::string> users;  // the submitter and the approvers named
  std::string summary;             // one line
};
using NotifyApproval = std::function<void(const ApprovalNotice&)>;

// Jobs that wait for an approver (docs/projects.md):
//   GET  /v1/approvals          the waiting jobs the caller may decide
//   POST /v1/jobs/ID/approve    pending_approval -> queued; body {"reason": ...} optional
//   POST /v1/jobs/ID/deny       pending_approval -> cancelled
// Only root and the job's project's approvers decide; each decision is in
// the job's history with who made it. Thread-safe: `store_mu` guards the
// store, as in JobApi.
class ApprovalApi {
 public:
  ApprovalApi(store::JobStore& jobs, core::Mutex& store_mu, const core::Clock& clock,
              const SubmitPolicySlot* policy, NotifyApproval notify,
              std::function<void()> queue_changed)
      : jobs_(jobs),
        store_mu_(store_mu),
        clock_(clock),
        policy_(policy),
        notify_(std::move(notify)),
        queue_changed_(std::move(queue_changed)) {}

  HttpResponse List(const HttpRequest& request, const Caller& caller);
  HttpResponse Decide(const HttpRequest& request, const Caller& caller, const store::JobRecord& job,
                      bool approve);
  // A submit that waits: its approvers hear of it.
  void Requested(const store::JobRecord& job, size_t tasks);

 private:
  bool MayDecide(const Caller& caller, const store::JobRecord& job) const;
  std::vector<std::string> Concerned(const store::JobRecord& job) const;

  store::JobStore& jobs_ GLEANER_GUARDED_BY(store_mu_);
  core::Mutex& store_mu_;
  const core::Clock& clock_;
  const SubmitPolicySlot* policy_;  // null: only root decides
  NotifyApproval notify_;
  std::function<void()> queue_changed_;
};

}  // namespace gleaner::server
