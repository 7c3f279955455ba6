#pragma once

#include "cluster/log.h"
#include "core/units.h"
#include "store/store.h"

namespace gleaner::cluster {

// The store's chores that no request triggers: jobs that waited for an
// approver longer than the approval timeout are cancelled as expired
// (looked for at most once a minute, however often it is asked), and
// events older than the history's retention are dropped (hourly). Not
// thread-safe.
class Housekeeping {
 public:
  Housekeeping(core::Duration approval_timeout, core::Duration history_retention)
      : approval_timeout_(approval_timeout), history_retention_(history_retention) {}

  void Tick(store::Store& store, core::TimePoint now, const Log& log);

 private:
  void ExpireApprovals(store::Store& store, core::TimePoint now, const Log& log);

  core::Duration approval_timeout_;
  core::Duration history_retention_;
  std::optional<core::TimePoint> last_;
  std::optional<core::TimePoint> last_prune_;
};

}  // namespace gleaner::cluster
