#include "sched/victim_selector.h"

#include <algorithm>

namespace gleaner::sched {
namespace {

// Far above any work a node's jobs could lose (8 GPUs for a year is 2.5e8
// GPU-seconds), so class decides before work, and sums of a few victims
// keep that order.
constexpr double kClassWeight = 1e12;
// What a restart costs a job that checkpointed on the signal.
constexpr double kRestartSeconds = 60;

double ClassTerm(PriorityClass c) { return c == PriorityClass::kOpportunistic ? 0 : kClassWeight; }

double PriorityTerm(int priority) { return (std::clamp(priority, -1000, 1000) + 1000) / 1000.0; }

}  // namespace

double LeastWorkLostSelector::Cost(const VictimCandidate& v) const {
  double lost_s = core::ToSecondsDouble(v.running_for);
  if (v.since_checkpoint) lost_s = std::min(lost_s, core::ToSecondsDouble(*v.since_checkpoint));
  if (v.checkpoints) lost_s = std::min(lost_s, kRestartSeconds);
  const double gpus = static_cast<double>(v.milli) / 1000.0;
  return ClassTerm(v.priority_class) + lost_s * gpus + PriorityTerm(v.priority);
}

double LowestPriorityFirstSelector::Cost(const VictimCandidate& v) const {
  // Priority steps of 1e6 stay above any run under 11 days.
  return ClassTerm(v.priority_class) + PriorityTerm(v.priority) * 1e9 +
         std::min(core::ToSecondsDouble(v.running_for), 9e5);
}

std::unique_ptr<VictimSelector> MakeVictimSelector(std::string_view name) {
  if (name == "least-work-lost") return std::make_unique<LeastWorkLostSelector>();
  if (name == "lowest-priority") return std::make_unique<LowestPriorityFirstSelector>();
  return nullptr;
}

}  // namespace gleaner::sched
