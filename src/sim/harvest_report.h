#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/harvest_money.h"
#include "sim/harvest_scenario.h"

namespace gleaner::sim {

// What a harvest scenario was, for its report.
struct HarvestScenarioInfo {
  std::string title;         // default: "gleaner sim harvest: " and the owner trace
  std::string preface_html;  // shown first, under the title (gleaner report's own part)
  std::string owner_trace;   // the owner workload's file or folder name
  std::string queue_source;  // "synthetic" or the queue file's name
  uint64_t seed = 0;
  int64_t checkpoint_s = 0;
  int64_t vacate_s = 0;
  double offered_gpu_hours = 0;
  // Money, when the GPUs could be priced.
  std::optional<HarvestPrices> prices;
  HarvestMoney money;
};

// report.html of `gleaner sim harvest`: one self-contained page (inline CSS
// and SVG) with the physical limit, a table of every baseline, harvested
// against idle GPUs over time, jobs waiting over time, where each run's
// GPU-hours went, the CDF of completion times, and, when priced, what the
// idle hours cost and what each run's work was worth. A pure function of its
// arguments: the same runs give the same bytes.
std::string RenderHarvestReport(const HarvestScenarioInfo& info, const OwnerTimeline& owner,
                                const std::vector<HarvestJob>& queue,
                                const std::vector<HarvestBaselineRun>& runs);

}  // namespace gleaner::sim
