#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "cost/catalog.h"

namespace gleaner::cli {

// `gleaner cost advise`: prices a job in-house, on spot, on-demand and
// reserved from the price catalog and recommends one (docs/cost.md).
struct CostAdviseOptions {
  std::string gpu;
  int count = 1;
  double hours = 0;
  std::string deadline;  // "48h", "2d", "90m" or hours; "" = none
  std::string region;
  std::string currency;                // "" = [cost] currency, else USD
  std::vector<std::string> catalogs;   // user files that add or override rows
  double cny_per_usd = -1;             // < 0 = [cost] cny_per_usd, else 7.2
  int64_t max_price_age_days = -1;     // < 0 = [cost] max_price_age_days, else 365
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
  // Where [cost] settings and this host's history come from; "" = the
  // data directory's gleaner.toml.
  std::string data_dir;
  std::string config;
  bool use_history = true;  // time in-house by this host's GPU history, when it has some
};

// `gleaner cost report`: what idle, held-idle and harvested GPU time cost
// on this host, by model, GPU, day, user and project (docs/cost.md).
struct CostReportOptions {
  std::string since = "7d";  // a span back from now, or YYYY-MM-DD
  std::string until;         // YYYY-MM-DD; "" = now
  std::vector<std::string> by = {"model", "user", "project", "day"};
  std::string currency;  // "" = [cost] currency
  // "busy": the owners' own work priced too, and each line's charge
  // (chargeback); the JSON always has both.
  std::vector<std::string> include;
  bool json = false;
  std::string data_dir;
  std::string config;
};

struct CostCommands {
  CLI::App* advise;
  CLI::App* report;
};

// Registers `cost` and its `advise` and `report` subcommands.
CostCommands AddCostCommands(CLI::App& app, CostAdviseOptions& advise, CostReportOptions& report);

// Run them; return the exit code (cli/exit_codes.h). `now` dates prices
// (unless --as-of) and ends reports.
int RunCostAdvise(const CostAdviseOptions& options, core::TimePoint now, std::ostream& out,
                  std::ostream& err);
int RunCostReport(const CostReportOptions& options, core::TimePoint now, std::ostream& out,
                  std::ostream& err);

}  // namespace gleaner::cli
