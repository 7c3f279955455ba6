#include "cost/accounting.h"

#include <algorithm>

namespace gleaner::cost {
namespace {

// The money of `line`'s hours at `prices` (null: unpriced).
void Price(CostLine& line, const GpuHourPrices* prices) {
  const bool owned = prices != nullptr && prices->owned_per_gpu_hour.has_value();
  const bool cloud = prices != nullptr && prices->cloud_per_gpu_hour.has_value();
  if (owned) {
    const double per_h = *prices->owned_per_gpu_hour;
    line.used_cost = line.used_h * per_h;
    line.idle_cost = line.idle_h * per_h;
    line.held_idle_cost = line.held_idle_h * per_h;
    line.harvested_owned_value = line.harvested_h * per_h;
    line.harvest_energy_cost = line.harvested_h * *prices->marginal_per_gpu_hour;
  } else {
    line.unpriced_owned_h = line.used_h + line.idle_h + line.held_idle_h + line.harvested_h;
  }
  if (cloud) {
    line.harvested_cloud_value = line.harvested_h * *prices->cloud_per_gpu_hour;
  } else {
    line.unpriced_cloud_h = line.harvested_h;
  }
  line.net_savings = line.harvested_cloud_value - line.harvest_energy_cost;
}

// Every number of a line: sums and shares treat them all alike.
constexpr double CostLine::*kLineFields[] = {
    &CostLine::observed_h,
    &CostLine::used_h,
    &CostLine::idle_h,
    &CostLine::held_idle_h,
    &CostLine::harvested_h,
    &CostLine::used_cost,
    &CostLine::idle_cost,
    &CostLine::held_idle_cost,
    &CostLine::harvested_owned_value,
    &CostLine::harvested_cloud_value,
    &CostLine::harvest_energy_cost,
    &CostLine::net_savings,
    &CostLine::unpriced_owned_h,
    &CostLine::unpriced_cloud_h,
};

void Add(CostLine& sum, const CostLine& part) {
  for (double CostLine::*f : kLineFields) sum.*f += part.*f;
}

CostLine Scaled(const CostLine& line, double share) {
  CostLine scaled;
  for (double CostLine::*f : kLineFields) scaled.*f = line.*f * share;
  return scaled;
}

// Credits `line` to each of `users` (and their projects) in equal shares;
// to kUnknownUser when nobody is named.
void CreditUsers(CostReport& report, const std::vector<std::string>& users, const CostLine& line,
                 const std::map<std::string, std::string>& project_of_user) {
  static const std::vector<std::string> kNobody = {kUnknownUser};
  const std::vector<std::string>& who = users.empty() ? kNobody : users;
  const CostLine share = Scaled(line, 1.0 / static_cast<double>(who.size()));
  for (const std::string& user : who) {
    Add(report.by_user[user], share);
    const auto project = project_of_user.find(user);
    Add(report.by_project[project == project_of_user.end() ? kNoProject : project->second], share);
  }
}

}  // namespace

void CostLedger::Add(const GpuTime& t, const GpuHourPrices* prices) {
  if (prices != nullptr && !report_.prices.count(t.model)) report_.prices.emplace(t.model, *prices);
  CostLine line;
  line.observed_h = t.observed_h;
  line.used_h = std::max(0.0, t.busy_h - t.held_idle_h - t.harvested_h);
  line.idle_h = t.idle_h;
  line.held_idle_h = t.held_idle_h;
  line.harvested_h = t.harvested_h;
  Price(line, prices);
  cost::Add(report_.total, line);
  cost::Add(report_.by_model[t.model], line);
  cost::Add(report_.by_gpu[t.gpu], line);
  cost::Add(report_.by_day[t.day], line);

  const bool owned_unpriced = prices == nullptr || !prices->owned_per_gpu_hour;
  CostLine owners_part;  // the owners' work and what they held idle
  owners_part.used_h = line.used_h;
  owners_part.used_cost = line.used_cost;
  owners_part.held_idle_h = line.held_idle_h;
  owners_part.held_idle_cost = line.held_idle_cost;
  owners_part.unpriced_owned_h = owned_unpriced ? line.used_h + line.held_idle_h : 0;
  if (owners_part.used_h > 0 || owners_part.held_idle_h > 0) {
    CreditUsers(report_, t.owners, owners_part, project_of_user_);
  }
  CostLine jobs_part = line;  // the harvested hours and what they were worth
  jobs_part.observed_h = jobs_part.used_h = jobs_part.idle_h = jobs_part.held_idle_h = 0;
  jobs_part.used_cost = jobs_part.idle_cost = jobs_part.held_idle_cost = 0;
  jobs_part.unpriced_owned_h = owned_unpriced ? line.harvested_h : 0;
  if (jobs_part.harvested_h > 0) CreditUsers(report_, t.job_users, jobs_part, project_of_user_);
}

CostReport Account(const std::vector<GpuTime>& times,
                   const std::map<std::string, GpuHourPrices>& prices,
                   const std::map<std::string, std::string>& project_of_user, Currency currency) {
  CostLedger ledger(project_of_user, currency);
  for (const GpuTime& t : times) {
    const auto found = prices.find(t.model);
    ledger.Add(t, found == prices.end() ? nullptr : &found->second);
  }
  return ledger.report();
}

}  // namespace gleaner::cost
