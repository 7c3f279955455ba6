#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "cost/catalog.h"
#include "sim/harvest_scenario.h"

namespace gleaner::sim {

// What a harvest scenario's GPU-hours are worth, in USD, when its GPUs are
// priced as `gpu_model`: an owned GPU-hour by the on-prem model's defaults
// (cost::DefaultOnPremParams), the same hour rented by the cheapest
// on-demand row of the catalog (rows of low confidence only when nothing
// else matches).
struct HarvestPrices {
  std::string gpu_model;
  double owned_per_gpu_hour = 0;     // capex, maintenance and power
  double marginal_per_gpu_hour = 0;  // the extra energy of filling an idle hour
  std::string onprem_source;
  double cloud_per_gpu_hour = 0;  // on-demand, per GPU
  std::string cloud_offer;        // "AWS us-east-1 p4de.24xlarge"
  std::string cloud_source;
  std::string cloud_date;  // YYYY-MM-DD
};

// NotFound when the model has no on-prem defaults or no on-demand price.
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
