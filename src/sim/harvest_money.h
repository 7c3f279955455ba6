#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "cost/catalog.h"
#include "cost/gpu_hour_prices.h"
#include "sim/harvest_scenario.h"

namespace gleaner::sim {

// A harvest scenario's GPUs priced as `gpu_model`, in USD: the on-prem
// model's defaults (cost::DefaultOnPremParams) and the catalog's cheapest
// on-demand row. Every part is present; NotFound otherwise.
using HarvestPrices = cost::GpuHourPrices;
core::Result<HarvestPrices> PriceHarvestGpus(const std::string& gpu_model,
                                             const cost::Catalog& catalog);

struct HarvestRunMoney {
  double cloud_value = 0;  // useful GPU-hours at the on-demand price
  double energy_cost = 0;  // harvested GPU-hours at the marginal cost
  double net_savings = 0;  // value less energy
};
struct HarvestMoney {
  double idle_cost = 0;               // the physical limit's GPU-hours at the owned cost
  std::vector<HarvestRunMoney> runs;  // per baseline run, in order
};
HarvestMoney MoneyOf(const HarvestPrices& prices, const std::vector<HarvestBaselineRun>& runs);

}  // namespace gleaner::sim
