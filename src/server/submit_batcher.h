#pragma once

#include <condition_variable>
#include <mutex>
#include <vector>

#include "core/clock.h"
#include "server/submit_quota.h"
#include "store/job_store.h"

namespace gleaner::server {

// Group commit: submits that arrive while a commit is on its way to disk
// wait, then go together in the next one, so N concurrent clients cost one
// fsync, not N. Each caller still returns only once its own jobs are on
// disk. The first waiter with nothing committing commits for everyone;
// there is no thread of its own. Each job is admitted against `limits`
// in the same hold of the store as its commit, so concurrent submits
// cannot together pass a limit. Thread-safe.
class SubmitBatcher {
 public:
  // `store_mu` guards `jobs`, which others use too.
  SubmitBatcher(store::JobStore& jobs, std::mutex& store_mu, const core::Clock& clock,
                SubmitLimits limits)
      : jobs_(jobs), store_mu_(store_mu), clock_(clock), limits_(limits) {}

  // The saved job: one record, or one per task of an array;
  // kResourceExhausted when it would pass a limit.
  core::Result<std::vector<store::JobRecord>> Submit(store::NewJob job);

 private:
  struct Waiter {
    store::NewJob job;
    bool done = false;
    core::Result<std::vector<store::JobRecord>> result = core::Internal("not committed");
  };
  void Commit(std::vector<Waiter*>& batch);

  store::JobStore& jobs_;
  std::mutex& store_mu_;
  const core::Clock& clock_;
  const SubmitLimits limits_;
  std::mutex mu_;
  std::condition_variable committed_;
  std::vector<Waiter*> pending_;
  bool committing_ = false;
};

}  // namespace gleaner::server
