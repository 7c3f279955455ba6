#include "cluster/housekeeping.h"

#include "core/format.h"

namespace gleaner::cluster {

using store::JobState;

void Housekeeping::Tick(store::Store& store, core::TimePoint now, const Log& log) {
  if (last_ && now - *last_ < core::Seconds(60)) return;
  last_ = now;
  ExpireApprovals(store, now, log);
  // Hourly, the first an hour after start: a daemon's first passes are
  // for its GPUs.
  if (!last_prune_) last_prune_ = now;
  if (now - *last_prune_ < core::Seconds(3600)) return;
  last_prune_ = now;
  auto pruned = store.PruneEvents(now - history_retention_);
  if (!pruned.ok()) log("history: " + pruned.status().message());
}

void Housekeeping::ExpireApprovals(store::Store& store, core::TimePoint now, const Log& log) {
  // A page at a time, oldest first: the expired ones come first.
  store::JobQuery query;
  query.states = {JobState::kPendingApproval};
  query.limit = 500;
  for (;;) {
    auto page = store.Find(query);
    if (!page.ok()) {
      log("approvals: " + page.status().message());
      return;
    }
    for (const store::JobRecord& job : *page) {
      if (now - job.submitted_at < approval_timeout_) return;
      store::JobUpdate u;
      u.event = "expired";
      u.at = now;
      u.reason = "no approver decided within " + core::FormatDuration(approval_timeout_) +
                 " ([rules] approval_timeout_s); submit it again if it is still wanted";
      // Decided meanwhile: the approver's word stands.
      if (store.Transition(job.id, JobState::kPendingApproval, JobState::kCancelled, u).ok()) {
        log("job " + std::to_string(job.id) + " expired: " + u.reason);
      }
    }
    if (static_cast<int64_t>(page->size()) < query.limit) return;
    query.after = page->back().id;
  }
}

}  // namespace gleaner::cluster
