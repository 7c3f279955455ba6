#include "server/submit_batcher.h"

#include <exception>

namespace gleaner::server {

SubmitBatcher::SubmitBatcher(store::JobStore& jobs, core::Mutex& store_mu, const core::Clock& clock,
                             SubmitLimits limits)
    : jobs_(jobs),
      store_mu_(store_mu),
      clock_(clock),
      limits_(limits),
      batches_([this](std::vector<store::NewJob*>& batch) { return Commit(batch); },
               [](const std::exception& e) -> Answer {
                 return core::Internal(std::string("saving the job failed: ") + e.what());
               }) {}

std::vector<SubmitBatcher::Answer> SubmitBatcher::Commit(std::vector<store::NewJob*>& batch) {
  // A job over a limit is answered at once and takes no part; the
  // admitted ones move into the commit, how many records each gets back
  // noted first.
  std::vector<Answer> answers(batch.size(), Answer(std::vector<store::JobRecord>()));
  std::vector<size_t> admitted;
  std::vector<store::NewJob> jobs;
  std::vector<std::ptrdiff_t> counts;
  core::Result<std::vector<store::JobRecord>> saved = std::vector<store::JobRecord>();
  {
    core::MutexLock store_lock(store_mu_);
    SubmitQuota quota(jobs_, limits_);
    for (size_t i = 0; i < batch.size(); ++i) {
      if (core::Status s = quota.Admit(*batch[i]); !s.ok()) {
        answers[i] = std::move(s);
        continue;
      }
      admitted.push_back(i);
      counts.push_back(static_cast<std::ptrdiff_t>(store::TaskCount(batch[i]->spec)));
      jobs.push_back(std::move(*batch[i]));
    }
    if (!jobs.empty()) saved = jobs_.SubmitAll(jobs, clock_.Now());
  }
  // Each admitted job gets its own records, in order; on failure all share
  // the error and none of their jobs was saved.
  auto next = saved.ok() ? saved->begin() : std::vector<store::JobRecord>::iterator{};
  for (size_t k = 0; k < admitted.size(); ++k) {
    if (!saved.ok()) {
      answers[admitted[k]] = saved.status();
      continue;
    }
    answers[admitted[k]] = std::vector<store::JobRecord>(std::make_move_iterator(next),
                                                         std::make_move_iterator(next + counts[k]));
    next += counts[k];
  }
  return answers;
}

}  // namespace gleaner::server
