#pragma once

#include <condition_variable>
#include <mutex>
#include <vector>

#include "core/clock.h"
#include "store/job_store.h"

namespace gleaner::server {

// Group commit: submits that arrive while a commit is on its way to disk
// wait, then go together in the next one, so N concurrent clients cost one
// fsync, not N. Each caller still returns only once its own jobs are on
// disk. The first waiter with nothing committing commits for everyone;
// there is no thread of its own. Thread-safe.
class SubmitBatcher {
 public:
  // `store_mu` guards `jobs`, which others use too.
  SubmitBatcher(store::JobStore& jobs, std::mutex& store_mu, const core::Clock& clock)
      : jobs_(jobs), store_mu_(store_mu), clock_(clock) {}

  // The saved job: one record, or one per task of an array.
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
  std::mutex mu_;
  std::condition_variable committed_;
  std::vector<Waiter*> pending_;
  bool committing_ = false;
};

}  // namespace gleaner::server
