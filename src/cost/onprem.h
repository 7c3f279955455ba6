#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "cost/catalog.h"

namespace gleaner::cost {

inline constexpr double kHoursPerYear = 8766;  // 365.25 days

// What owning one GPU server costs. Money in `currency`; power in kW or W as
// named. Every default (DefaultOnPremParams) is an assumption with a source.
struct OnPremParams {
  std::string gpu_model;
  Currency currency = Currency::kUsd;
  double server_capex = 0;                 // purchase price of one server
  double life_years = 4;                   // amortisation period
  double maintenance_rate_per_year = 0.1;  // support and repair, fraction of capex per year
  double server_power_kw = 0;              // the server's maximum draw
  double load_fraction = 0.7;              // average draw / maximum
  double pue = 1.58;                       // data-centre power usage effectiveness
  double electricity_per_kwh = 0.10;
  int gpus_per_server = 8;
  double gpu_busy_w = 0;  // one GPU's draw when working (its TDP)
  double gpu_idle_w = 0;  // one GPU's draw when idle
  std::string source;     // where the defaults come from
};

// The cost of an owned GPU-hour and of filling an idle one, each with its parts.
struct OnPremCost {
  double capex_per_server_hour = 0;        // capex / (life_years * 8766)
  double maintenance_per_server_hour = 0;  // capex * maintenance_rate / 8766
  double power_per_server_hour = 0;        // kW * load * PUE * price per kWh
  double per_server_hour = 0;              // the three above
  double per_gpu_hour = 0;                 // per_server_hour / gpus_per_server
  // Filling an idle hour: capex and maintenance are sunk, so only the extra
  // energy: (busy W - idle W) / 1000 * PUE * price per kWh.
  double marginal_per_gpu_hour = 0;
};

// InvalidArgument naming the first parameter out of range: capex, power,
// draws and price must be >= 0, life_years and gpus_per_server > 0,
// load_fraction in [0, 1], pue >= 1, gpu_busy_w >= gpu_idle_w.
core::Status ValidateOnPremParams(const OnPremParams& params);

// Computes the costs. Parameters must be positive where a division needs it
// (life_years, gpus_per_server); a broken invariant aborts.
OnPremCost ComputeOnPremCost(const OnPremParams& params);

// The cost of a *useful* GPU-hour at `utilization` in (0, 1].
double CostPerUsefulGpuHour(const OnPremCost& cost, double utilization);

// Defaults for H100 (8x H100 server) and A100 (8x A100 server) families, the
// README worked examples of the price facts; nullopt for other models.
std::optional<OnPremParams> DefaultOnPremParams(std::string_view gpu_model);

}  // namespace gleaner::cost
