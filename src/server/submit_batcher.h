#pragma once

#include <vector>

#include "core/clock.h"
#include "core/group_commit.h"
#include "core/mutex.h"
#include "server/submit_quota.h"
#include "store/job_store.h"

namespace gleaner::server {

// Submits go to disk in groups (core::GroupCommit): N concurrent clients
// cost one fsync, not N, and each caller returns only once its own jobs
// are on disk. Each job is admitted against `limits` in the same hold of
// the store as its commit, so concurrent submits cannot together pass a
// limit. Thread-safe.
class SubmitBatcher {
 public:
  // `store_mu` guards `jobs`, which others use too.
  SubmitBatcher(store::JobStore& jobs, core::Mutex& store_mu, const core::Clock& clock,
                SubmitLimits limits);

  // The saved job: one record, or one per task of an array;
  // kResourceExhausted when it would pass a limit.
  core::Result<std::vector<store::JobRecord>> Submit(store::NewJob job) {
    return batches_.Submit(std::move(job));
  }

 private:
  using Answer = core::Result<std::vector<store::JobRecord>>;
  std::vector<Answer> Commit(std::vector<store::NewJob*>& batch);

  store::JobStore& jobs_ GLEANER_GUARDED_BY(store_mu_);
  core::Mutex& store_mu_;
  const core::Clock& clock_;
  const SubmitLimits limits_;
  core::GroupCommit<store::NewJob, Answer> batches_;
};

}  // namespace gleaner::server
