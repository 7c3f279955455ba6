#pragma once

#include <memory>
#include <string_view>
#include <tuple>

#include "core/units.h"
#include "sched/job_request.h"

namespace gleaner::sched {

// What an ordering may look at for one pending job.
struct OrderingInput {
  const JobRequest* job = nullptr;
  core::TimePoint submitted_at;
  core::TimePoint now;
  double project_fair_share = 1;  // FairShareLedger::Factor: 1 used nothing, towards 0 used much
  double user_fair_share = 1;
};

// Where a job stands in the queue; lower sorts first. The priority class
// always comes first, so no score lets an opportunistic job pass a normal
// one; within a class a higher score first, then the earlier submit, then
// the lower id, so the order is total and deterministic.
struct OrderKey {
  int class_rank = 1;
  double score = 0;
  core::TimePoint submitted_at;
  JobId id = 0;

  friend bool operator<(const OrderKey& a, const OrderKey& b) {
    return std::tuple(a.class_rank, -a.score, a.submitted_at, a.id) <
           std::tuple(b.class_rank, -b.score, b.submitted_at, b.id);
  }
};

// Policy: the order in which pending jobs are offered GPUs. Keys are
// recomputed on every Tick (ages and usage change with time) and for a job
// when it is submitted. Implementations are pure and thread-compatible.
//
// A key may depend only on the job's class, numeric priority and id, its
// submit time, the time and the two fair-share factors; and among jobs of
// one class, priority, project and user at one time and with the same
// factors, the earlier submit (then the lower id) must sort first. That
// keeps each such group a FIFO (PendingQueue), so time passing re-sorts
// groups, not jobs.
class JobOrdering {
 public:
  virtual ~JobOrdering() = default;
  virtual OrderKey Key(const OrderingInput& in) const = 0;
  virtual std::string_view Name() const = 0;
};

// Class, then numeric priority, then age: the simple placer's order.
class PriorityFifoOrdering final : public JobOrdering {
 public:
  OrderKey Key(const OrderingInput& in) const override;
  std::string_view Name() const override { return "fifo"; }
};

// Slurm's multifactor priority within a class: a weighted sum of the
// numeric priority, age and fair share, each normalised to 0..1. Age grows
// linearly until `age_horizon`, so a job that waited long enough outranks
// any fresh job of the same class with up to `age_weight` points more of
// the other factors: the guard against starvation.
struct MultifactorWeights {
  double priority = 1000;
  double age = 1000;
  double fair_share = 1000;
  core::Duration age_horizon = core::Seconds(24 * 3600);
};

class MultifactorOrdering final : public JobOrdering {
 public:
  explicit MultifactorOrdering(MultifactorWeights w = {}) : w_(w) {}
  OrderKey Key(const OrderingInput& in) const override;
  std::string_view Name() const override { return "multifactor"; }

 private:
  MultifactorWeights w_;
};

}  // namespace gleaner::sched
