#include "sim/harvest_money.h"

#include "cost/civil_date.h"
#include "cost/onprem.h"

namespace gleaner::sim {

core::Result<HarvestPrices> PriceHarvestGpus(const std::string& gpu_model,
                                             const cost::Catalog& catalog) {
  HarvestPrices p;
  p.gpu_model = gpu_model;
  const std::optional<cost::OnPremParams> onprem = cost::DefaultOnPremParams(gpu_model);
  if (!onprem) {
    return core::NotFound("no on-prem cost defaults for " + gpu_model +
                          "; price the harvest as H100-80GB or A100-80GB (docs/cost.md)");
  }
  const cost::OnPremCost owned = cost::ComputeOnPremCost(*onprem);
  p.owned_per_gpu_hour = owned.per_gpu_hour;
  p.marginal_per_gpu_hour = owned.marginal_per_gpu_hour;
  p.onprem_source = onprem->source;
  GLEANER_ASSIGN_OR_RETURN(std::vector<cost::PriceRow> rows, catalog.Find(gpu_model, ""));
  const cost::ExchangeRates rates;
  const cost::PriceRow* best = nullptr;
  double best_price = 0;
  for (bool allow_low : {false, true}) {
    for (const cost::PriceRow& r : rows) {
      if (r.pricing_model != cost::PricingModel::kOnDemand) continue;
      if (!allow_low && r.confidence == "low") continue;
      const double per_gpu =
          rates.Convert(r.price_per_instance_hour, r.currency, cost::Currency::kUsd) / r.gpu_count;
      if (best == nullptr || per_gpu < best_price) {
        best = &r;
        best_price = per_gpu;
      }
    }
    if (best != nullptr) break;
  }
  if (best == nullptr) return core::NotFound("no on-demand price for " + gpu_model);
  p.cloud_per_gpu_hour = best_price;
  p.cloud_offer = best->provider + " " + best->region + " " + best->instance;
  p.cloud_source = best->source;
  p.cloud_date = cost::FormatIsoDate(best->date_days);
  return p;
}

HarvestMoney MoneyOf(const HarvestPrices& prices, const std::vector<HarvestBaselineRun>& runs) {
  HarvestMoney m;
  if (!runs.empty()) {
    m.idle_cost = LimitOf(runs.front().result).idle_gpu_hours * prices.owned_per_gpu_hour;
  }
  for (const HarvestBaselineRun& r : runs) {
    HarvestRunMoney run;
    run.cloud_value = r.metrics.useful_gpu_hours * prices.cloud_per_gpu_hour;
    run.energy_cost = r.metrics.harvested_gpu_hours * prices.marginal_per_gpu_hour;
    run.net_savings = run.cloud_value - run.energy_cost;
    m.runs.push_back(run);
  }
  return m;
}

}  // namespace gleaner::sim
