#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/log.h"
#include "core/ids.h"
#include "core/units.h"
#include "sched/job_spec.h"

namespace gleaner::cluster {

// What harvesting would have done, in shadow mode (`gleaner up --mode
// shadow`): the scheduler places queued jobs as ever, but nothing starts;
// each placement is a shadow run, on the books while the scheduler keeps
// proposing it pass after pass (its GPUs stay idle), until it would have
// finished (its expected or maximum runtime) or its GPUs were no longer
// idle (the owner would have taken them back). Not thread-safe.
class ShadowLedger {
 public:
  struct Run {
    sched::JobId job = 0;
    std::string user;
    std::string host;
    std::vector<core::GpuUuid> gpus;
    std::optional<core::Duration> runtime;  // how long it would run, if known
  };
  struct Totals {
    int64_t starts = 0;      // runs begun
    int64_t vacated = 0;     // runs whose GPUs stopped being idle
    int64_t finished = 0;    // runs that would have run their course
    int64_t gpus_now = 0;    // GPUs the runs on the books would hold
    double gpu_seconds = 0;  // GPU time they would have harvested
  };

  // A pass begins at `now`: the runs proposed in the last pass accrue its
  // GPU time; those not proposed again end (their GPUs were taken back);
  // those past their runtime would have finished.
  void BeginPass(core::TimePoint now, const Log& log);
  // The scheduler would start `run` now; false for a job that would have
  // finished already (it is not placed again).
  bool WouldStart(const Run& run, core::TimePoint now, const Log& log);
  Totals Read() const;

 private:
  struct OnBooks {
    Run run;
    core::TimePoint since;
    bool proposed = false;  // in the pass under way
  };
  std::map<sched::JobId, OnBooks> runs_;
  std::set<sched::JobId> done_;  // finished runs, not placed again
  std::optional<core::TimePoint> pass_at_;
  Totals totals_;
};

}  // namespace gleaner::cluster
