#include "cost/onprem.h"

#include <cstdio>
#include <cstdlib>

namespace gleaner::cost {

core::Status ValidateOnPremParams(const OnPremParams& p) {
  struct Check {
    const char* name;
    bool ok;
    const char* expected;
  };
  const Check checks[] = {
      {"capex", p.server_capex >= 0, "at least 0"},
      {"life_years", p.life_years > 0, "above 0"},
      {"maintenance_rate", p.maintenance_rate_per_year >= 0, "at least 0"},
      {"server_kw", p.server_power_kw >= 0, "at least 0"},
      {"load", p.load_fraction >= 0 && p.load_fraction <= 1, "from 0 to 1"},
      {"pue", p.pue >= 1, "at least 1"},
      {"electricity_per_kwh", p.electricity_per_kwh >= 0, "at least 0"},
      {"gpus_per_server", p.gpus_per_server > 0, "above 0"},
      {"gpu_idle_w", p.gpu_idle_w >= 0, "at least 0"},
      {"gpu_busy_w", p.gpu_busy_w >= p.gpu_idle_w, "at least gpu_idle_w"},
  };
  for (const Check& c : checks) {
    if (!c.ok) {
      return core::InvalidArgument(std::string("on-prem ") + c.name + ": expected " + c.expected);
    }
  }
  return core::Status::Ok();
}

OnPremCost ComputeOnPremCost(const OnPremParams& p) {
  if (p.life_years <= 0 || p.gpus_per_server <= 0) {
    std::fprintf(stderr, "gleaner: broken invariant: on-prem life_years and gpus_per_server > 0\n");
    std::abort();
  }
  OnPremCost c;
  c.capex_per_server_hour = p.server_capex / (p.life_years * kHoursPerYear);
  c.maintenance_per_server_hour = p.server_capex * p.maintenance_rate_per_year / kHoursPerYear;
  c.power_per_server_hour = p.server_power_kw * p.load_fraction * p.pue * p.electricity_per_kwh;
  c.per_server_hour =
      c.capex_per_server_hour + c.maintenance_per_server_hour + c.power_per_server_hour;
  c.per_gpu_hour = c.per_server_hour / p.gpus_per_server;
  c.marginal_per_gpu_hour = (p.gpu_busy_w - p.gpu_idle_w) / 1000.0 * p.pue * p.electricity_per_kwh;
  return c;
}

double CostPerUsefulGpuHour(const OnPremCost& cost, double utilization) {
  return cost.per_gpu_hour / utilization;
}

std::optional<OnPremParams> DefaultOnPremParams(std::string_view gpu_model) {
  const std::string reduced = ReduceGpuModel(gpu_model);
  OnPremParams p;
  p.gpu_model = std::string(gpu_model);
  // Shared assumptions (docs/cost.md): 4-year life, 10 %/yr maintenance,
  // 70 % average load, PUE 1.58 (Uptime Institute 2023 average), $0.10/kWh.
  if (reduced.starts_with("H100") || reduced.starts_with("H200")) {
    p.server_capex = 270000;   // DGX H100 sale estimate, SemiAnalysis May 2023
    p.server_power_kw = 10.2;  // DGX H100 maximum (NVIDIA datasheet, recalled)
    p.gpu_busy_w = 700;        // H100 SXM TDP
    p.gpu_idle_w = 75;         // assumption
    p.source =
        "assumed: DGX H100 $270k (SemiAnalysis 2023-05), 10.2 kW, 700 W busy / 75 W idle, 4 y, "
        "10 %/y maintenance, 70 % load, PUE 1.58 (Uptime 2023), $0.10/kWh";
    return p;
  }
  if (reduced.starts_with("A100")) {
    p.server_capex = 200000;  // DGX A100 launch list $199k (2020, recalled), rounded
    p.server_power_kw = 6.5;  // DGX A100 maximum (NVIDIA datasheet, recalled)
    p.gpu_busy_w = 400;       // A100 SXM TDP
    p.gpu_idle_w = 50;        // assumption
    p.source =
        "assumed: DGX A100 $200k (2020 list, unverified), 6.5 kW, 400 W busy / 50 W idle, 4 y, "
        "10 %/y maintenance, 70 % load, PUE 1.58 (Uptime 2023), $0.10/kWh";
    return p;
  }
  return std::nullopt;
}

}  // namespace gleaner::cost
