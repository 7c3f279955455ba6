#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost/gpu_hour_prices.h"

namespace gleaner::cost {

// One GPU's time over a span (a minute, as the store keeps it), as the
// accounting sees it. Hours are GPU-hours; held-idle and harvested time
// are part of busy.
struct GpuTime {
  std::string gpu;    // its UUID
  std::string model;  // catalog model (CatalogModelOfGpuName)
  int64_t day = 0;    // UTC day, days since 1970-01-01
  double observed_h = 0;
  double busy_h = 0;
  double idle_h = 0;
  double held_idle_h = 0;
  double harvested_h = 0;
  std::vector<std::string> owners;     // users of the processes gleaner did not start
  std::vector<std::string> job_users;  // users of gleaner's jobs
};

// GPU-hours and what they cost or were worth, in the report's currency.
// Money is counted only for GPU-hours whose price is known: each unpriced
// hour is in `unpriced_owned_h` or `unpriced_cloud_h` instead.
struct CostLine {
  double observed_h = 0;
  double used_h = 0;  // busy, less held-idle and harvested: the owners' work
  double idle_h = 0;
  double held_idle_h = 0;
  double harvested_h = 0;
  double used_cost = 0;              // used hours at the owned cost: the owners' own work
  double idle_cost = 0;              // idle hours at the owned cost
  double held_idle_cost = 0;         // held-idle hours at the owned cost
  double harvested_owned_value = 0;  // harvested hours at the owned cost
  double harvested_cloud_value = 0;  // harvested hours at the on-demand price
  double harvest_energy_cost = 0;    // harvested hours at the marginal cost
  double net_savings = 0;            // cloud value less energy
  double unpriced_owned_h = 0;       // hours without an owned cost (all but observed)
  double unpriced_cloud_h = 0;       // harvested hours without an on-demand price

  // Chargeback: every GPU-hour the line's users occupied (their own work,
  // what they held idle, what their gleaner jobs ran) at the owned cost.
  double charge() const { return used_cost + held_idle_cost + harvested_owned_value; }
};

struct CostReport {
  Currency currency = Currency::kUsd;
  CostLine total;
  std::map<std::string, CostLine> by_model;
  std::map<std::string, CostLine> by_gpu;
  std::map<int64_t, CostLine> by_day;
  // Users and projects carry only the time that is theirs: held-idle and
  // used hours to the owners, harvested hours to the jobs' users; a span
  // shared by several users is split evenly among them. Idle time is
  // nobody's.
  std::map<std::string, CostLine> by_user;
  std::map<std::string, CostLine> by_project;
  std::map<std::string, GpuHourPrices> prices;  // per model seen
};

// Names for time with no user or project behind it.
inline constexpr const char* kUnknownUser = "(unknown)";
inline constexpr const char* kNoProject = "(none)";

// Adds up GPU time as it comes, so that a long history need not be held
// in memory at once.
class CostLedger {
 public:
  CostLedger(std::map<std::string, std::string> project_of_user, Currency currency)
      : project_of_user_(std::move(project_of_user)) {
    report_.currency = currency;
  }
  // `prices`: the model's, or null when it is unpriced.
  void Add(const GpuTime& time, const GpuHourPrices* prices);
  const CostReport& report() const { return report_; }

 private:
  std::map<std::string, std::string> project_of_user_;
  CostReport report_;
};

// Adds up `times`. `prices` maps each model to its prices (a model absent
// from it is unpriced); `project_of_user` assigns users to projects (users
// without one go to kNoProject). Pure.
CostReport Account(const std::vector<GpuTime>& times,
                   const std::map<std::string, GpuHourPrices>& prices,
                   const std::map<std::string, std::string>& project_of_user, Currency currency);

}  // namespace gleaner::cost
