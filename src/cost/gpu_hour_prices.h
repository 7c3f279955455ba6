#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cost/catalog.h"
#include "cost/onprem.h"

namespace gleaner::cost {

// What one GPU-hour of a model is worth three ways, in `currency`: owned
// (capex, maintenance and power by the on-prem model), filled (the extra
// energy of working an idle hour), and rented (the cheapest on-demand row
// of the catalog, per GPU; rows of low confidence only when nothing else
// matches). A part that cannot be priced is absent, with the reason in
// `missing`: never a silent zero.
struct GpuHourPrices {
  std::string gpu_model;
  Currency currency = Currency::kUsd;
  std::optional<double> owned_per_gpu_hour;
  std::optional<double> marginal_per_gpu_hour;
  std::string onprem_source;
  std::optional<double> cloud_per_gpu_hour;
  std::string cloud_offer;  // "AWS us-east-1 p4de.24xlarge"
  std::string cloud_source;
  std::string cloud_date;  // YYYY-MM-DD
  std::vector<std::string> missing;
};

// `onprem`: the model's parameters; nullopt = DefaultOnPremParams.
GpuHourPrices PriceGpuHours(const std::string& gpu_model, const Catalog& catalog,
                            const std::optional<OnPremParams>& onprem, Currency currency,
                            const ExchangeRates& rates);

}  // namespace gleaner::cost
