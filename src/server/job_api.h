#pragma once

#include <mutex>
#include <string>

#include "core/clock.h"
#include "sched/job_spec.h"
#include "server/caller.h"
#include "server/http_message.h"
#include "server/submit_batcher.h"
#include "store/job_store.h"

namespace gleaner::server {

// The job API (docs/api.md), versioned under /v1:
//   POST /v1/jobs               submit (the body is a job spec); the job runs as the caller;
//                               an array queues one task per index
//   GET  /v1/jobs[?all=1]       waiting and running jobs (all: finished ones too)
//   GET  /v1/jobs/ID            one job
//   POST /v1/jobs/ID/cancel     the caller's own job (any, for root); ?array=1: every
//                               task of its array not yet ended; likewise:
//   POST /v1/jobs/ID/hold       queued -> held (not started until released)
//   POST /v1/jobs/ID/release    held -> queued
//   GET  /v1/jobs/ID/logs?stream=out|err&offset=N
//                               {"data": ..., "offset": next}; owner or root only
// Errors are {"error": {"code", "message"}} with a 4xx or 5xx status.
// The store and clock must outlive it. Thread-safe: `store_mu` guards the
// store, and concurrent submits share commits (SubmitBatcher).
class JobApi {
 public:
  // `log_dir` holds the jobs' <id>.out and <id>.err.
  JobApi(store::JobStore& jobs, std::mutex& store_mu, const core::Clock& clock,
         sched::JobLimits limits, std::string log_dir)
      : jobs_(jobs),
        store_mu_(store_mu),
        batcher_(jobs, store_mu, clock),
        clock_(clock),
        limits_(limits),
        log_dir_(std::move(log_dir)) {}

  // `request.path` starts with /v1/jobs.
  HttpResponse Handle(const HttpRequest& request, const Caller& caller);

 private:
  HttpResponse Submit(const HttpRequest& request, const Caller& caller);
  // Every task of `task`'s array that has not ended (all its owner's).
  HttpResponse CancelArray(const store::JobRecord& task, const store::JobUpdate& update);

  store::JobStore& jobs_;
  std::mutex& store_mu_;
  SubmitBatcher batcher_;
  const core::Clock& clock_;
  sched::JobLimits limits_;
  std::string log_dir_;
};

}  // namespace gleaner::server
