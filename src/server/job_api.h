#pragma once

#include <string>

#include "core/clock.h"
#include "sched/job_spec.h"
#include "server/http_message.h"
#include "store/job_store.h"

namespace gleaner::server {

// Who is calling: on the Unix socket, the kernel says (SO_PEERCRED).
struct Caller {
  uint32_t uid = 0;
  std::string user;
  bool admin() const { return uid == 0; }
};

// The job API (docs/api.md), versioned under /v1:
//   POST /v1/jobs               submit (the body is a job spec); the job runs as the caller
//   GET  /v1/jobs[?all=1]       waiting and running jobs (all: finished ones too)
//   GET  /v1/jobs/ID            one job
//   POST /v1/jobs/ID/cancel     the caller's own job (any, for root); likewise:
//   POST /v1/jobs/ID/hold       queued -> held (not started until released)
//   POST /v1/jobs/ID/release    held -> queued
//   GET  /v1/jobs/ID/logs?stream=out|err&offset=N
//                               {"data": ..., "offset": next}; owner or root only
// Errors are {"error": {"code", "message"}} with a 4xx or 5xx status.
// The store and clock must outlive it; not thread-safe.
class JobApi {
 public:
  // `log_dir` holds the jobs' <id>.out and <id>.err.
  JobApi(store::JobStore& jobs, const core::Clock& clock, sched::JobLimits limits,
         std::string log_dir)
      : jobs_(jobs), clock_(clock), limits_(limits), log_dir_(std::move(log_dir)) {}

  HttpResponse Handle(const HttpRequest& request, const Caller& caller);

 private:
  store::JobStore& jobs_;
  const core::Clock& clock_;
  sched::JobLimits limits_;
  std::string log_dir_;
};

}  // namespace gleaner::server
