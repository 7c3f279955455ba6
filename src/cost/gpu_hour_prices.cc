#include "cost/gpu_hour_prices.h"

#include "cost/civil_date.h"

namespace gleaner::cost {

GpuHourPrices PriceGpuHours(const std::string& gpu_model, const Catalog& catalog,
                            const std::optional<OnPremParams>& onprem, Currency currency,
                            const ExchangeRates& rates) {
  GpuHourPrices p;
  p.gpu_model = gpu_model;
  p.currency = currency;
  const std::optional<OnPremParams> params = onprem ? onprem : DefaultOnPremParams(gpu_model);
  if (params) {
    const OnPremCost owned = ComputeOnPremCost(*params);
    p.owned_per_gpu_hour = rates.Convert(owned.per_gpu_hour, params->currency, currency);
    p.marginal_per_gpu_hour =
        rates.Convert(owned.marginal_per_gpu_hour, params->currency, currency);
    p.onprem_source = params->source;
  } else {
    p.missing.push_back("no on-prem cost parameters for " + gpu_model +
                        "; give them under [cost.onprem.\"" + gpu_model +
                        "\"] in gleaner.toml (docs/cost.md)");
  }
  const PriceRow* best = nullptr;
  double best_price = 0;
  if (auto rows = catalog.Find(gpu_model, ""); rows.ok()) {
    for (bool allow_low : {false, true}) {
      for (const PriceRow& r : *rows) {
        if (r.pricing_model != PricingModel::kOnDemand) continue;
        if (!allow_low && r.confidence == "low") continue;
        const double per_gpu =
            rates.Convert(r.price_per_instance_hour, r.currency, currency) / r.gpu_count;
        if (best == nullptr || per_gpu < best_price) {
          best = &r;
          best_price = per_gpu;
        }
      }
      if (best != nullptr) break;
    }
    if (best != nullptr) {
      p.cloud_per_gpu_hour = best_price;
      p.cloud_offer = best->provider + " " + best->region + " " + best->instance;
      p.cloud_source = best->source;
      p.cloud_date = FormatIsoDate(best->date_days);
    }
  }
  if (best == nullptr) {
    p.missing.push_back("no on-demand price for " + gpu_model +
                        " in the catalog; add a row with a catalog file (docs/cost.md)");
  }
  return p;
}

}  // namespace gleaner::cost
