#include "sim/harvest_scenario.h"

#include <chrono>

namespace gleaner::sim {

core::Result<std::vector<HarvestBaselineRun>> RunHarvestBaselines(
    const OwnerTimeline& owner, const std::vector<HarvestJob>& queue, const HarvestConfig& config,
    bool held_runs) {
  std::vector<std::pair<HarvestPolicy, bool>> plan = {{HarvestPolicy::kNone, false}};
  std::vector<HarvestPolicy> policies = {HarvestPolicy::kNaive, HarvestPolicy::kGleaner};
  if (held_runs) policies.insert(policies.end(), {HarvestPolicy::kColocate, HarvestPolicy::kPark});
  for (HarvestPolicy p : policies) {
    if (config.checkpoint_s > 0) plan.emplace_back(p, true);
    plan.emplace_back(p, false);
  }
  std::vector<HarvestBaselineRun> runs;
  for (const auto& [policy, checkpoints] : plan) {
    HarvestConfig c = config;
    c.policy = policy;
    c.checkpoint_s = checkpoints ? config.checkpoint_s : 0;
    const auto start = std::chrono::steady_clock::now();
    GLEANER_ASSIGN_OR_RETURN(HarvestResult r, RunHarvest(owner, queue, c));
    HarvestBaselineRun run;
    run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.policy = policy;
    run.checkpoints = checkpoints;
    run.metrics =
        ComputeHarvestMetrics(std::string(HarvestPolicyName(policy)), checkpoints, queue, r);
    run.result = std::move(r);
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace gleaner::sim
