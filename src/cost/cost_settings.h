#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "cost/catalog.h"
#include "cost/gpu_speed.h"
#include "cost/onprem.h"

namespace gleaner::cost {

// How this site prices GPU time: gleaner.toml's [cost] (docs/configuration.md).
struct CostSettings {
  Currency currency = Currency::kUsd;
  ExchangeRates rates;
  int64_t max_price_age_days = 365;
  std::vector<std::string> catalog_files;  // add to or replace the shipped rows
  // Driver GPU name -> catalog model, where CatalogModelOfGpuName guesses wrong.
  std::map<std::string, std::string> gpu_models;
  // Catalog model -> the site's on-prem parameters (the defaults with the
  // site's values laid over them).
  std::map<std::string, OnPremParams> onprem;
  // Catalog model -> its speed beside an A100 as this site measured it.
  std::map<std::string, double> speeds;

  // The catalog model of a GPU the driver names `driver_name`.
  std::string ModelOf(std::string_view driver_name,
                      std::optional<uint64_t> memory_total_bytes) const;
  // The site's parameters for `gpu_model`, else DefaultOnPremParams.
  std::optional<OnPremParams> OnPremFor(std::string_view gpu_model) const;
  // The site's speed for `gpu_model`, else PublishedGpuSpeed.
  std::optional<GpuSpeed> SpeedOf(std::string_view gpu_model) const;
};

// The on-prem parameter names a site may set, as gleaner.toml spells them:
// server_capex, life_years, maintenance_rate_per_year, server_power_kw,
// load_fraction, pue, electricity_per_kwh, gpus_per_server, gpu_busy_w,
// gpu_idle_w.
const std::vector<std::string_view>& OnPremParameterNames();
// Sets one; InvalidArgument for an unknown name.
core::Status SetOnPremParameter(OnPremParams& params, std::string_view name, double value);

}  // namespace gleaner::cost
