#pragma once

#include <functional>
#include <string>

#include "core/clock.h"
#include "core/mutex.h"
#include "sched/job_spec.h"
#include "server/approval_api.h"
#include "server/caller.h"
#include "server/event_api.h"
#include "server/http_message.h"
#include "server/submit_batcher.h"
#include "server/submit_policy.h"
#include "store/store.h"

namespace gleaner::server {

// The job API (docs/api.md), versioned under /v1:
//   POST /v1/jobs               submit (the body is a job spec); the job runs as the caller;
//                               an array queues one task per index
//   GET  /v1/jobs               a page of jobs, oldest first: waiting and running ones,
//                               or ?state=..., ?all=1; ?user=NAME; ?limit=N, ?after=ID
//                               (ParseJobListQuery); "next" names the next page's after
//   GET  /v1/jobs/ID            one job
//   POST /v1/jobs/ID/terminal   an interactive session's terminal (Api::Terminal)
//   POST /v1/jobs/ID/cancel     the caller's own job (any, for root); ?array=1: every
//                               task of its array not yet ended; likewise:
//   POST /v1/jobs/ID/hold       queued -> held (not started until released)
//   POST /v1/jobs/ID/release    held -> queued
//   POST /v1/jobs/ID/approve    pending_approval -> queued, and deny (ApprovalApi)
//   GET  /v1/jobs/ID/events     its history, oldest first (EventApi)
//   GET  /v1/jobs/ID/logs?stream=out|err&offset=N
//                               {"data": ..., "offset": next}; owner or root only
// Errors are {"error": {"code", "message"}} with a 4xx or 5xx status.
// The store and clock must outlive it. Thread-safe: `store_mu` guards the
// store, held for one store call at a time (a listing reads one bounded
// page), and concurrent submits share commits (SubmitBatcher), each
// within `submit_limits`.
// Where a coordinator finds a job's log: on the host that ran it. Given
// the job, the stream (err: stderr) and the offset, the answer to
// GET /v1/jobs/ID/logs (usually one that comes later).
using RemoteLogs =
    std::function<HttpResponse(const store::JobRecord& job, bool err, uint64_t offset)>;

// Why a token limited to some projects may not act for `project`.
core::Status NotForProject(const Caller& caller, const std::string& project);

class JobApi {
 public:
  // `log_dir` holds the jobs' <id>.out and <id>.err, unless `remote_logs`
  // (a coordinator's) is given; `queue_changed` (may be empty) hears of
  // each submit and move once it is durable; `policy` (may be null; it
  // must outlive the API) admits each submit; `notify` (may be empty)
  // hears of approvals asked for and given.
  JobApi(store::Store& store, core::Mutex& store_mu, const core::Clock& clock,
         sched::JobLimits limits, SubmitLimits submit_limits, std::string log_dir,
         std::function<void()> queue_changed = {}, RemoteLogs remote_logs = {},
         const SubmitPolicySlot* policy = nullptr, NotifyApproval notify = {},
         bool runs_sessions = false)
      : jobs_(store),
        store_mu_(store_mu),
        batcher_(store, store_mu, clock, submit_limits),
        clock_(clock),
        limits_(limits),
        log_dir_(std::move(log_dir)),
        queue_changed_(queue_changed),
        remote_logs_(std::move(remote_logs)),
        policy_(policy),
        runs_sessions_(runs_sessions),
        events_(store, store_mu, clock),
        approvals_(store, store_mu, clock, policy, std::move(notify), std::move(queue_changed)) {}

  // `request.path` starts with /v1/jobs.
  HttpResponse Handle(const HttpRequest& request, const Caller& caller);
  // /v1/events and /v1/approvals.
  HttpResponse Events(const HttpRequest& request, const Caller& caller) {
    return events_.List(request, caller);
  }
  HttpResponse Approvals(const HttpRequest& request, const Caller& caller) {
    return approvals_.List(request, caller);
  }

 private:
  HttpResponse Submit(const HttpRequest& request, const Caller& caller);
  HttpResponse List(const std::string& query, const Caller& caller);
  // GET /v1/jobs/ID/logs, once the caller may read `job`'s.
  HttpResponse Logs(const store::JobRecord& job, const std::string& query);
  // Every task of `task`'s array that has not ended (all its owner's).
  HttpResponse CancelArray(const store::JobRecord& task, const store::JobUpdate& update)
      GLEANER_REQUIRES(store_mu_);

  store::JobStore& jobs_ GLEANER_GUARDED_BY(store_mu_);
  core::Mutex& store_mu_;
  SubmitBatcher batcher_;
  const core::Clock& clock_;
  sched::JobLimits limits_;
  std::string log_dir_;
  std::function<void()> queue_changed_;
  RemoteLogs remote_logs_;
  const SubmitPolicySlot* policy_;  // null: a well-formed spec is enough
  bool runs_sessions_;  // interactive sessions start here (their terminals are handed out)
  EventApi events_;
  ApprovalApi approvals_;
};

}  // namespace gleaner::server
