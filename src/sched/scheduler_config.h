#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/units.h"
#include "sched/model_cost.h"
#include "sched/ordering.h"
#include "sched/quota.h"
#include "sched/reservation.h"

namespace gleaner::sched {

// Tunables of the Scheduler. Defaults suit one 8-GPU host as well as a
// simulated cluster of thousands.
struct SchedulerConfig {
  // A job that has run for less than this is never preempted to make room
  // for another (an owner taking a GPU back does not wait for it).
  core::Duration min_runtime = core::Seconds(600);
  // Fair share forgets usage with this half-life (Slurm's default).
  core::Duration usage_half_life = core::Seconds(7 * 24 * 3600);
  MultifactorWeights weights;  // for the default ordering
  std::map<std::string, ProjectQuota> projects;
  ProjectQuota default_quota;  // for projects not listed: no guarantee, no limit
  std::map<std::string, double> user_weights;
  // Standing reservations (active from the start) and windowed ones (active
  // from the first Tick at or after `starts_at` until the first at or after
  // `ends_at`). More may come as ReservationStarted events.
  std::vector<Reservation> reservations;
  // A pass started by an event stops after this many jobs in a row that
  // could not start (Slurm's default_queue_depth does the same); a Tick's
  // pass considers every pending job.
  int event_pass_depth = 1000;
  // At most this many pending jobs per pass look for victims to preempt.
  int preemptions_per_pass = 8;
  // Placement looks at this many candidate nodes (and shared GPUs).
  int placement_candidates = 16;
  // Preemption compares the victim sets of this many nodes where the job
  // would fit, lowest index first, and takes the cheapest.
  int preemption_candidate_nodes = 64;
  // Forecast-aware placement: a job with a runtime guess goes where the
  // GPUs' expected quiet (p80) covers it, the tightest such window first so
  // long windows stay for long jobs; where none covers it, the longest.
  // This comes before packing: an owner's return costs the job its work.
  bool window_aware_placement = true;
  // Backfill (EASY, as Slurm's sched/backfill and Maui do it): when a
  // pass meets the first job that cannot start and cannot preempt, it works
  // out from running jobs' expected runtimes when and on which node that
  // job would fit, and keeps those GPUs for it: a job behind it may take
  // them only if its own expected runtime ends by then, or if enough are
  // left for the blocked job. Jobs without an expected runtime never take
  // them. Off: the greedy pass lets any later job take any free GPU, except
  // that a gang over several nodes, whose nodes would seldom drain together
  // by chance, is always kept its nodes so.
  bool backfill = false;
  // Cost-aware choice between GPU models: where a job may use several
  // models, it goes to the one whose useful GPU-hour (price over speed) is
  // cheapest among those with room; fragmentation decides within it. Only
  // where every model the job may use has a price (ModelCosts).
  bool cost_aware = true;
  ModelPriceFn model_price;      // null: no model is priced
  std::string currency = "USD";  // of the prices, for the reason a job is told
};

}  // namespace gleaner::sched
