#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace gleaner::cli {

// `gleaner cost advise`: prices a job in-house, on spot, on-demand and
// reserved from the price catalog and recommends one (docs/cost.md).
struct CostAdviseOptions {
  std::string gpu;
  int count = 1;
  double hours = 0;
  std::string deadline;  // "48h", "2d", "90m" or hours; "" = none
  std::string region;
  std::string currency = "USD";
  std::vector<std::string> catalogs;  // user files that add or override rows
  double cny_per_usd = 7.2;
  int64_t max_price_age_days = 365;
  std::string as_of;                   // YYYY-MM-DD; "" = today
  double idle_gpu_hours_per_day = -1;  // < 0 = unknown
  std::string checkpoint_interval;     // duration; "" = Young/Daly
  std::string checkpoint_cost = "5m";
  std::string restart = "10m";
  double spot_interruption_percent = -1;  // per month; < 0 = the GPU family's band
  // On-prem parameters for the in-house option; < 0 (or "") = the model's
  // default (docs/cost.md).
  double onprem_capex = -1;
  double onprem_life_years = -1;
  double onprem_maintenance_rate = -1;
  double onprem_server_kw = -1;
  double onprem_load = -1;
  double pue = -1;
  double electricity_per_kwh = -1;
  int gpus_per_server = -1;
  double gpu_busy_w = -1;
  double gpu_idle_w = -1;
  std::string onprem_currency;
  bool single_instance = false;
  bool json = false;
};

// Registers `cost` and its `advise` subcommand; returns `advise`.
CLI::App* AddCostCommands(CLI::App& app, CostAdviseOptions& options);

// Runs it. `today_days` (days since 1970-01-01) is used when --as-of is not
// given. Returns the exit code (cli/exit_codes.h).
int RunCostAdvise(const CostAdviseOptions& options, int64_t today_days, std::ostream& out,
                  std::ostream& err);

}  // namespace gleaner::cli
