#include "server/cost_ledger.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>

#include "core/civil_time.h"
#include "cost/civil_date.h"
#include "observe/usage_profile.h"
#include "observe/verdict_json.h"

namespace gleaner::server {
namespace {

double Hours(core::Duration d) { return core::ToSecondsDouble(d) / 3600; }

// Rounds to `decimals` places (scaling up first keeps 0.1 + 0.2 from printing long).
double Round(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

nlohmann::ordered_json LineJson(const cost::CostLine& l) {
  const auto h = [](double v) { return Round(v, 4); };
  const auto money = [](double v) { return Round(v, 2); };
  return {
      {"gpu_hours",
       {{"observed", h(l.observed_h)},
        {"used", h(l.used_h)},
        {"idle", h(l.idle_h)},
        {"held_idle", h(l.held_idle_h)},
        {"harvested", h(l.harvested_h)}}},
      {"money",
       {{"used_cost", money(l.used_cost)},
        {"idle_cost", money(l.idle_cost)},
        {"held_idle_cost", money(l.held_idle_cost)},
        {"harvested_owned_value", money(l.harvested_owned_value)},
        {"harvested_cloud_value", money(l.harvested_cloud_value)},
        {"harvest_energy_cost", money(l.harvest_energy_cost)},
        {"net_savings", money(l.net_savings)},
        {"charge", money(l.charge())}}},
      {"unpriced_gpu_hours", {{"owned", h(l.unpriced_owned_h)}, {"cloud", h(l.unpriced_cloud_h)}}},
  };
}

nlohmann::ordered_json Optional(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(Round(*v, 4)) : nlohmann::ordered_json(nullptr);
}

// Calls `visit` for every minute in [from, to), reading a day at a time.
core::Status ForEachMinute(store::ObservationStore& store, core::TimePoint from, core::TimePoint to,
                           const std::function<void(const observe::MinuteRollup&)>& visit) {
  constexpr core::Duration kChunk = core::Seconds(86400);
  for (core::TimePoint start = from; start < to; start += kChunk) {
    const core::TimePoint end = std::min(to, start + kChunk);
    GLEANER_ASSIGN_OR_RETURN(std::vector<observe::MinuteRollup> minutes,
                             store.RollupsBetween(start, end));
    for (const observe::MinuteRollup& m : minutes) visit(m);
  }
  return core::Status::Ok();
}

}  // namespace

core::Result<LedgerReport> BuildLedgerReport(
    store::ObservationStore& store, const cost::Catalog& catalog,
    const cost::CostSettings& settings, const std::map<std::string, std::string>& project_of_user,
    core::TimePoint from, core::TimePoint to) {
  LedgerReport ledger;
  ledger.from = from;
  ledger.to = to;
  GLEANER_ASSIGN_OR_RETURN(std::vector<store::GpuRecord> gpus, store.Gpus());
  std::map<std::string, std::string> model_of_gpu;
  for (store::GpuRecord& g : gpus) {
    model_of_gpu[g.uuid.str()] = settings.ModelOf(
        g.name, g.memory_total ? std::optional<uint64_t>(g.memory_total->count()) : std::nullopt);
    ledger.gpus[g.uuid.str()] = std::move(g);
  }
  cost::CostLedger costs(project_of_user, settings.currency);
  std::map<std::string, cost::GpuHourPrices> prices;
  std::set<std::string> unrecorded;
  // A day of minutes at a time: a long history never sits in memory whole.
  GLEANER_RETURN_IF_ERROR(ForEachMinute(store, from, to, [&](const observe::MinuteRollup& m) {
    cost::GpuTime t;
    t.gpu = m.uuid.str();
    const auto model = model_of_gpu.find(t.gpu);
    if (model == model_of_gpu.end()) unrecorded.insert(t.gpu);
    t.model = model == model_of_gpu.end() ? kUnrecordedModel : model->second;
    t.day = cost::DaysFromUnixSeconds(core::ToUnixMicros(m.minute) / 1'000'000);
    t.observed_h = Hours(m.observed);
    t.busy_h = Hours(m.busy);
    t.idle_h = Hours(m.idle);
    t.held_idle_h = Hours(m.held_idle);
    t.harvested_h = Hours(m.harvested);
    t.owners.assign(m.users.begin(), m.users.end());
    t.job_users.assign(m.job_users.begin(), m.job_users.end());
    const cost::GpuHourPrices* model_prices = nullptr;
    if (t.model != kUnrecordedModel) {
      auto it = prices.find(t.model);
      if (it == prices.end()) {
        it =
            prices
                .emplace(t.model, cost::PriceGpuHours(t.model, catalog, settings.OnPremFor(t.model),
                                                      settings.currency, settings.rates))
                .first;
      }
      model_prices = &it->second;
    }
    costs.Add(t, model_prices);
  }));
  for (const auto& [model, p] : prices) {
    for (const std::string& why : p.missing) ledger.warnings.push_back(why);
  }
  if (!unrecorded.empty()) {
    ledger.warnings.push_back(std::to_string(unrecorded.size()) +
                              " GPU(s) have minutes but no recorded model (history from before "
                              "gleaner recorded GPUs); their time is counted, not priced");
  }
  ledger.report = costs.report();
  return ledger;
}

core::Result<std::pair<core::TimePoint, core::TimePoint>> ParseReportSpan(const std::string& since,
                                                                          const std::string& until,
                                                                          core::TimePoint now) {
  const auto day_start = [](int64_t days) {
    return core::FromUnixMicros(days * 86400 * int64_t{1'000'000});
  };
  core::TimePoint to = now;
  if (!until.empty()) {
    const std::optional<int64_t> d = cost::ParseIsoDate(until);
    if (!d) return core::InvalidArgument("until: expected YYYY-MM-DD, got \"" + until + "\"");
    to = day_start(*d);
  }
  core::TimePoint from;
  if (const std::optional<int64_t> d = cost::ParseIsoDate(since)) {
    from = day_start(*d);
  } else if (const std::optional<double> h = cost::ParseHours(since)) {
    from = to - core::Duration(static_cast<int64_t>(*h * 3600e6));
  } else {
    return core::InvalidArgument("since: expected a span such as 7d or 24h, or YYYY-MM-DD, got \"" +
                                 since + "\"");
  }
  if (!(from < to)) return core::InvalidArgument("since must come before until");
  // The report reads the store day by day: a bounded span keeps one
  // request from occupying the store for minutes.
  if (to - from > core::Seconds(int64_t{kMaxReportDays} * 86400)) {
    return core::InvalidArgument("a cost report covers at most " + std::to_string(kMaxReportDays) +
                                 " days; ask for several shorter spans");
  }
  return std::make_pair(from, to);
}

core::Result<std::optional<cost::IdleForecast>> ForecastIdleGpus(store::ObservationStore& store,
                                                                 const cost::CostSettings& settings,
                                                                 const std::string& gpu_model,
                                                                 core::TimePoint now,
                                                                 core::Duration lookback) {
  GLEANER_ASSIGN_OR_RETURN(std::vector<store::GpuRecord> gpus, store.Gpus());
  std::set<std::string> of_model;
  for (const store::GpuRecord& g : gpus) {
    const std::string model = settings.ModelOf(
        g.name, g.memory_total ? std::optional<uint64_t>(g.memory_total->count()) : std::nullopt);
    // Either name may be the more specific ("A100-80GB" and "A100-80GB-SXM").
    if (cost::GpuModelMatches(gpu_model, model) || cost::GpuModelMatches(model, gpu_model)) {
      of_model.insert(g.uuid.str());
    }
  }
  if (of_model.empty()) return std::optional<cost::IdleForecast>();
  struct Hours {
    std::array<double, observe::kHoursPerWeek> lendable_s{}, observed_s{};
  };
  std::map<std::string, Hours> per_gpu;
  double observed_total_s = 0;
  GLEANER_RETURN_IF_ERROR(
      ForEachMinute(store, now - lookback, now, [&](const observe::MinuteRollup& m) {
        if (!of_model.count(m.uuid.str())) return;
        const auto h = static_cast<size_t>(observe::HourOfWeek(m.minute));
        Hours& hours = per_gpu[m.uuid.str()];
        hours.lendable_s[h] += core::ToSecondsDouble(m.idle + m.harvested);
        hours.observed_s[h] += core::ToSecondsDouble(m.observed);
        observed_total_s += core::ToSecondsDouble(m.observed);
      }));
  if (per_gpu.empty()) return std::optional<cost::IdleForecast>();
  cost::IdleForecast f;
  for (const auto& [uuid, hours] : per_gpu) {
    for (size_t h = 0; h < hours.observed_s.size(); ++h) {
      if (hours.observed_s[h] > 0) f.idle_gpus[h] += hours.lendable_s[h] / hours.observed_s[h];
    }
  }
  const int64_t now_s = core::ToUnixMicros(now) / 1'000'000;
  f.now_hour_of_week =
      observe::HourOfWeek(now) + static_cast<double>(((now_s % 3600) + 3600) % 3600) / 3600;
  char basis[160];
  std::snprintf(basis, sizeof basis,
                "history of %zu %s GPU(s): %.1f GPU-hours observed in the last %.0f days",
                per_gpu.size(), gpu_model.c_str(), observed_total_s / 3600,
                core::ToSecondsDouble(lookback) / 86400);
  f.basis = basis;
  return std::optional<cost::IdleForecast>(std::move(f));
}

nlohmann::ordered_json LedgerReportToJson(const LedgerReport& ledger) {
  const cost::CostReport& r = ledger.report;
  nlohmann::ordered_json j;
  j["format"] = "gleaner.cost-report/v1";
  j["from"] = core::Rfc3339(ledger.from);
  j["to"] = core::Rfc3339(ledger.to);
  j["currency"] = cost::CurrencyName(r.currency);
  j["total"] = LineJson(r.total);
  const auto keyed = [](const char* key_name, const std::string& key, const cost::CostLine& line) {
    nlohmann::ordered_json row = {{key_name, key}};
    row.update(LineJson(line));
    return row;
  };
  j["by_model"] = nlohmann::ordered_json::array();
  for (const auto& [model, line] : r.by_model) j["by_model"].push_back(keyed("model", model, line));
  j["by_gpu"] = nlohmann::ordered_json::array();
  for (const auto& [uuid, line] : r.by_gpu) {
    nlohmann::ordered_json row = keyed("uuid", uuid, line);
    if (auto g = ledger.gpus.find(uuid); g != ledger.gpus.end()) {
      row["host"] = g->second.host;
      row["index"] = g->second.index;
      row["name"] = g->second.name;
    }
    j["by_gpu"].push_back(std::move(row));
  }
  j["by_day"] = nlohmann::ordered_json::array();
  for (const auto& [day, line] : r.by_day) {
    j["by_day"].push_back(keyed("day", cost::FormatIsoDate(day), line));
  }
  j["by_user"] = nlohmann::ordered_json::array();
  for (const auto& [user, line] : r.by_user) j["by_user"].push_back(keyed("user", user, line));
  j["by_project"] = nlohmann::ordered_json::array();
  for (const auto& [project, line] : r.by_project) {
    j["by_project"].push_back(keyed("project", project, line));
  }
  j["prices"] = nlohmann::ordered_json::array();
  for (const auto& [model, p] : r.prices) {
    j["prices"].push_back({{"model", model},
                           {"owned_per_gpu_hour", Optional(p.owned_per_gpu_hour)},
                           {"marginal_per_gpu_hour", Optional(p.marginal_per_gpu_hour)},
                           {"onprem_source", p.onprem_source},
                           {"cloud_per_gpu_hour", Optional(p.cloud_per_gpu_hour)},
                           {"cloud_offer", p.cloud_offer},
                           {"cloud_source", p.cloud_source},
                           {"cloud_date", p.cloud_date},
                           {"missing", p.missing}});
  }
  j["warnings"] = ledger.warnings;
  return j;
}

}  // namespace gleaner::server
