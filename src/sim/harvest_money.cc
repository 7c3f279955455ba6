#include "sim/harvest_money.h"

namespace gleaner::sim {

core::Result<HarvestPrices> PriceHarvestGpus(const std::string& gpu_model,
                                             const cost::Catalog& catalog) {
  HarvestPrices p = cost::PriceGpuHours(gpu_model, catalog, std::nullopt, cost::Currency::kUsd,
                                        cost::ExchangeRates());
  if (!p.owned_per_gpu_hour) {
    return core::NotFound("no on-prem cost defaults for " + gpu_model +
                          "; price the harvest as H100-80GB or A100-80GB (docs/cost.md)");
  }
  if (!p.cloud_per_gpu_hour) return core::NotFound(p.missing.front());
  return p;
}

HarvestMoney MoneyOf(const HarvestPrices& prices, const std::vector<HarvestBaselineRun>& runs) {
  HarvestMoney m;
  if (!runs.empty()) {
    m.idle_cost = LimitOf(runs.front().result).idle_gpu_hours * *prices.owned_per_gpu_hour;
  }
  for (const HarvestBaselineRun& r : runs) {
    HarvestRunMoney run;
    run.cloud_value = r.metrics.useful_gpu_hours * *prices.cloud_per_gpu_hour;
    run.energy_cost = r.metrics.harvested_gpu_hours * *prices.marginal_per_gpu_hour;
    run.net_savings = run.cloud_value - run.energy_cost;
    m.runs.push_back(run);
  }
  return m;
}

}  // namespace gleaner::sim
