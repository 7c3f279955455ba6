#pragma once

#include "cost/cost_settings.h"
#include "sched/model_cost.h"

namespace gleaner::config {

// The prices the scheduler's cost-aware choice between GPU models uses:
// what an owned GPU-hour of the model costs by the on-prem model (the
// site's [cost.onprem] or the defaults), in the site's currency, with its
// speed ([cost.speed] or the published default). A model missing either is
// unpriced, so the choice never guesses.
sched::ModelPriceFn ModelPrices(const cost::CostSettings& settings);

}  // namespace gleaner::config
