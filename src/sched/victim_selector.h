#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "core/units.h"
#include "sched/job_request.h"

namespace gleaner::sched {

// A running job that rules allow to be preempted, as a selector sees it.
struct VictimCandidate {
  JobId job = 0;
  PriorityClass priority_class = PriorityClass::kNormal;
  int priority = 0;
  int64_t milli = 1000;  // its whole allocation
  core::Duration running_for{};
  // Time since its last checkpoint; nullopt if it never reported one.
  std::optional<core::Duration> since_checkpoint;
  bool checkpoints = false;  // saves its state when signalled
};

// Policy: the price of preempting one job. Lower goes first; the planner
// adds victims cheapest first on each node and takes the node whose
// (minimal) set costs least. Costs must be non-negative and add up
// meaningfully. Rules (critical, non-preemptible and protected jobs are
// never candidates) are the planner's, not the selector's.
// Implementations are pure and thread-compatible.
class VictimSelector {
 public:
  virtual ~VictimSelector() = default;
  virtual double Cost(const VictimCandidate& v) const = 0;
  virtual std::string_view Name() const = 0;
};

// The work a preemption throws away, in GPU-seconds: nothing much for a
// job that checkpoints on the signal (a restart's worth), the time since
// the last checkpoint for one that reported checkpoints, else its whole
// run so far. Opportunistic jobs go before normal ones whatever the work;
// among equal work, lower priority first.
class LeastWorkLostSelector final : public VictimSelector {
 public:
  double Cost(const VictimCandidate& v) const override;
  std::string_view Name() const override { return "least-work-lost"; }
};

// Kubernetes' and KAI's order: lowest class, then lowest priority, then the
// shortest running. Ignores checkpoints.
class LowestPriorityFirstSelector final : public VictimSelector {
 public:
  double Cost(const VictimCandidate& v) const override;
  std::string_view Name() const override { return "lowest-priority"; }
};

// "least-work-lost" or "lowest-priority"; nullptr for other names.
std::unique_ptr<VictimSelector> MakeVictimSelector(std::string_view name);

}  // namespace gleaner::sched
