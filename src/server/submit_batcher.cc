#include "server/submit_batcher.h"

#include <exception>

namespace gleaner::server {

core::Result<std::vector<store::JobRecord>> SubmitBatcher::Submit(store::NewJob job) {
  Waiter me{std::move(job)};
  std::unique_lock lock(mu_);
  pending_.push_back(&me);
  while (!me.done) {
    if (committing_) {
      committed_.wait(lock);
      continue;
    }
    committing_ = true;
    std::vector<Waiter*> batch;
    batch.swap(pending_);
    lock.unlock();
    try {
      Commit(batch);
    } catch (const std::exception& e) {
      // Whoever was not answered learns why; the next commit can proceed.
      std::lock_guard answer(mu_);
      for (Waiter* w : batch) {
        if (w->done) continue;
        w->result = core::Internal(std::string("saving the job failed: ") + e.what());
        w->done = true;
      }
    }
    lock.lock();
    committing_ = false;
    committed_.notify_all();
  }
  return std::move(me.result);
}

void SubmitBatcher::Commit(std::vector<Waiter*>& batch) {
  // The admitted jobs move into the commit; how many records each gets
  // back is noted first. A job over a limit is answered at once and
  // takes no part.
  std::vector<Waiter*> admitted;
  std::vector<store::NewJob> jobs;
  std::vector<std::ptrdiff_t> counts;
  core::Result<std::vector<store::JobRecord>> saved = std::vector<store::JobRecord>();
  {
    std::lock_guard store_lock(store_mu_);
    SubmitQuota quota(jobs_, limits_);
    for (Waiter* w : batch) {
      if (core::Status s = quota.Admit(w->job); !s.ok()) {
        std::lock_guard answer(mu_);
        w->result = std::move(s);
        w->done = true;
        continue;
      }
      admitted.push_back(w);
      counts.push_back(static_cast<std::ptrdiff_t>(store::TaskCount(w->job.spec)));
      jobs.push_back(std::move(w->job));
    }
    if (!jobs.empty()) saved = jobs_.SubmitAll(jobs, clock_.Now());
  }
  // Hand each waiter its own records, in order; on failure all share the
  // error and none of their jobs was saved.
  auto next = saved.ok() ? saved->begin() : std::vector<store::JobRecord>::iterator{};
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < admitted.size(); ++i) {
    Waiter* w = admitted[i];
    if (saved.ok()) {
      const std::ptrdiff_t count = counts[i];
      w->result = std::vector<store::JobRecord>(std::make_move_iterator(next),
                                                std::make_move_iterator(next + count));
      next += count;
    } else {
      w->result = saved.status();
    }
    w->done = true;
  }
}

}  // namespace gleaner::server
