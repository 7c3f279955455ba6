#include <algorithm>
#include <cstdio>
#include <ostream>

#include "cli/cost_command.h"
#include "cli/daemon_support.h"
#include "cli/exit_codes.h"
#include "config/catalog_files.h"
#include "config/config_file.h"
#include "config/data_dir.h"
#include "core/civil_time.h"
#include "cost/advisor.h"
#include "cost/civil_date.h"
#include "daemon/daemon_start.h"
#include "server/cost_ledger.h"

namespace gleaner::cli {
namespace {

// One table of the report: a row per key, hours and money side by side;
// with `busy`, the owners' own work priced too and each row's charge.
void PrintLines(const std::string& title,
                const std::vector<std::pair<std::string, cost::CostLine>>& rows, bool busy,
                std::ostream& out) {
  int width = static_cast<int>(title.size());
  for (const auto& row : rows) width = std::max(width, static_cast<int>(row.first.size()));
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %9s %9s %9s %9s %9s %10s %10s %10s %9s %10s", width,
                title.c_str(), "observed", "used", "idle", "held-idle", "harvested", "idle cost",
                "held cost", "harv value", "energy", "net saved");
  out << line;
  if (busy) {
    std::snprintf(line, sizeof line, " %10s %10s", "used cost", "charge");
    out << line;
  }
  out << "\n";
  for (const auto& [key, l] : rows) {
    std::snprintf(line, sizeof line,
                  "%-*s %9.2f %9.2f %9.2f %9.2f %9.2f %10.2f %10.2f %10.2f %9.2f %10.2f", width,
                  key.c_str(), l.observed_h, l.used_h, l.idle_h, l.held_idle_h, l.harvested_h,
                  l.idle_cost, l.held_idle_cost, l.harvested_cloud_value, l.harvest_energy_cost,
                  l.net_savings);
    out << line;
    if (busy) {
      std::snprintf(line, sizeof line, " %10.2f %10.2f", l.used_cost, l.charge());
      out << line;
    }
    out << "\n";
  }
  out << "\n";
}

template <typename Key>
std::vector<std::pair<std::string, cost::CostLine>> Rows(const std::map<Key, cost::CostLine>& lines,
                                                         std::string (*name)(const Key&)) {
  std::vector<std::pair<std::string, cost::CostLine>> rows;
  for (const auto& [key, line] : lines) rows.emplace_back(name(key), line);
  return rows;
}

std::string Same(const std::string& s) { return s; }
std::string DayName(const int64_t& day) { return cost::FormatIsoDate(day); }

}  // namespace

int RunCostReport(const CostReportOptions& o, core::TimePoint now, std::ostream& out,
                  std::ostream& err) {
  auto config = config::LoadCommandConfig(config::DataDir(o.data_dir), o.config);
  if (!config.ok()) {
    err << "gleaner: " << config.status().message() << "\n";
    return kExitBadInput;
  }
  cost::CostSettings site = config->cost;
  if (!o.currency.empty()) {
    const auto currency = cost::ParseCurrency(o.currency);
    if (!currency) {
      err << "gleaner: --currency: expected USD or CNY, got \"" << o.currency << "\"\n";
      return kExitUsage;
    }
    site.currency = *currency;
  }
  auto span = server::ParseReportSpan(o.since, o.until, now);
  if (!span.ok()) {
    err << "gleaner: --" << span.status().message() << "\n";
    return kExitUsage;
  }
  auto store = daemon::OpenHistory(config::DataDir(o.data_dir));
  if (!store.ok()) {
    err << "gleaner: " << store.status().message() << "\n";
    return kExitFailure;
  }
  core::Result<cost::Catalog> catalog = config::LoadCatalog(site.catalog_files);
  if (!catalog.ok()) {
    err << "gleaner: " << catalog.status().message() << "\n";
    return catalog.status().code() == core::StatusCode::kNotFound ? kExitFailure : kExitBadInput;
  }
  auto ledger = server::BuildLedgerReport(**store, *catalog, site, config->project_of_user,
                                          span->first, span->second);
  if (!ledger.ok()) {
    err << "gleaner: " << ledger.status().message() << "\n";
    return kExitFailure;
  }
  if (o.json) {
    out << server::LedgerReportToJson(*ledger).dump(2) << "\n";
    return kExitOk;
  }
  const cost::CostReport& r = ledger->report;
  const std::string cur(cost::CurrencyName(r.currency));
  out << "GPU time from " << core::Rfc3339(ledger->from) << " to " << core::Rfc3339(ledger->to)
      << "; hours are GPU-hours, money in " << cur << "\n\n";
  const bool busy = std::find(o.include.begin(), o.include.end(), "busy") != o.include.end();
  PrintLines("total", {{"all GPUs", r.total}}, busy, out);
  for (const std::string& by : o.by) {
    if (by == "model") PrintLines("by model", Rows(r.by_model, Same), busy, out);
    if (by == "gpu") PrintLines("by GPU", Rows(r.by_gpu, Same), busy, out);
    if (by == "user") PrintLines("by user", Rows(r.by_user, Same), busy, out);
    if (by == "project") PrintLines("by project", Rows(r.by_project, Same), busy, out);
    if (by == "day") PrintLines("by day (UTC)", Rows(r.by_day, DayName), busy, out);
  }
  if (busy) {
    out << "charge: each GPU-hour a row's users occupied (used, held idle, harvested by their "
           "jobs) at the owned cost\n";
  }
  for (const auto& [model, p] : r.prices) {
    out << "price of " << model << ":";
    if (p.owned_per_gpu_hour) {
      out << " owned " << cost::FormatMoney(*p.owned_per_gpu_hour) << " " << cur
          << "/GPU-h, filling an idle hour " << cost::FormatMoney(*p.marginal_per_gpu_hour) << " ("
          << p.onprem_source << ");";
    }
    if (p.cloud_per_gpu_hour) {
      out << " on demand " << cost::FormatMoney(*p.cloud_per_gpu_hour) << " " << cur << "/GPU-h ("
          << p.cloud_offer << "; " << p.cloud_source << ", " << p.cloud_date << ")";
    }
    out << "\n";
  }
  for (const std::string& w : ledger->warnings) out << "warning: " << w << "\n";
  return kExitOk;
}

}  // namespace gleaner::cli
