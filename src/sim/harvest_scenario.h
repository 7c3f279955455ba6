#pragma once

#include <vector>

#include "core/result.h"
#include "sim/harvest.h"
#include "sim/harvest_metrics.h"

namespace gleaner::sim {

// One run of the baselines of a harvest scenario.
struct HarvestBaselineRun {
  HarvestPolicy policy = HarvestPolicy::kNone;
  bool checkpoints = false;
  HarvestResult result;
  HarvestMetrics metrics;
  double wall_s = 0;  // how long the replay took (not part of the metrics: it varies)
};

// The same owner timeline and queue under every baseline, in this order:
// no harvesting; naive and gleaner, each with jobs that save their state
// every `config.checkpoint_s` (when above 0) and with jobs that never do;
// with `held_runs` (a trace that shows the owners' memory), colocate and
// park after them, the same way.
core::Result<std::vector<HarvestBaselineRun>> RunHarvestBaselines(
    const OwnerTimeline& owner, const std::vector<HarvestJob>& queue, const HarvestConfig& config,
    bool held_runs = false);

}  // namespace gleaner::sim
