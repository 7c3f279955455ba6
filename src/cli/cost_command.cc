#include "cli/cost_command.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "cli/exit_codes.h"
#include "config/catalog_files.h"
#include "config/config_file.h"
#include "config/data_dir.h"
#include "cost/advice_json.h"
#include "cost/advisor.h"
#include "cost/catalog.h"
#include "cost/civil_date.h"
#include "server/cost_ledger.h"
#include "store/sqlite_store.h"

namespace gleaner::cli {
namespace {

void PrintTable(const cost::Advice& a, std::ostream& out) {
  const std::string cur(cost::CurrencyName(a.currency));
  for (size_t i = 0; i < a.options.size(); ++i) {
    const cost::AdviceOption& o = a.options[i];
    out << (a.recommended == i ? "* " : "  ") << o.kind;
    if (!o.provider.empty()) out << "  " << o.provider << " " << o.region << " " << o.instance;
    out << "\n    expected " << cost::FormatMoney(o.expected_cost) << " " << cur << " over "
        << cost::FormatMoney(o.expected_hours)
        << " h; meets deadline: " << cost::DeadlineVerdictName(o.meets_deadline)
        << (o.eligible ? "" : " (not eligible)") << "\n    source: " << o.source
        << (o.date.empty() ? "" : ", " + o.date) << "\n";
    for (const std::string& line : o.arithmetic) out << "    = " << line << "\n";
    for (const std::string& note : o.notes) out << "    note: " << note << "\n";
  }
  out << "recommendation: " << a.recommendation << "\n";
  for (const std::string& w : a.warnings) out << "warning: " << w << "\n";
}

// The on-prem parameters the flags ask for: the model's defaults with the
// flags given laid over them; nullopt (defaults or none) when no flag is
// given. A model without defaults needs at least the two GPU draws.
core::Result<std::optional<cost::OnPremParams>> OnPremFromFlags(const CostAdviseOptions& o) {
  struct Flag {
    const char* name;
    double value;
    double* target;
  };
  std::optional<cost::OnPremParams> defaults = cost::DefaultOnPremParams(o.gpu);
  cost::OnPremParams p = defaults.value_or(cost::OnPremParams{});
  p.gpu_model = o.gpu;
  const Flag flags[] = {
      {"--onprem-capex", o.onprem_capex, &p.server_capex},
      {"--onprem-life-years", o.onprem_life_years, &p.life_years},
      {"--onprem-maintenance-rate", o.onprem_maintenance_rate, &p.maintenance_rate_per_year},
      {"--onprem-server-kw", o.onprem_server_kw, &p.server_power_kw},
      {"--onprem-load", o.onprem_load, &p.load_fraction},
      {"--pue", o.pue, &p.pue},
      {"--electricity-per-kwh", o.electricity_per_kwh, &p.electricity_per_kwh},
      {"--gpu-busy-w", o.gpu_busy_w, &p.gpu_busy_w},
      {"--gpu-idle-w", o.gpu_idle_w, &p.gpu_idle_w},
  };
  std::string given;
  for (const Flag& f : flags) {
    if (f.value < 0) continue;
    *f.target = f.value;
    given += std::string(given.empty() ? "" : ", ") + f.name;
  }
  if (o.gpus_per_server >= 0) {
    p.gpus_per_server = o.gpus_per_server;
    given += std::string(given.empty() ? "" : ", ") + "--gpus-per-server";
  }
  if (!o.onprem_currency.empty()) {
    const auto c = cost::ParseCurrency(o.onprem_currency);
    if (!c) {
      return core::InvalidArgument("--onprem-currency: expected USD or CNY, got \"" +
                                   o.onprem_currency + "\"");
    }
    p.currency = *c;
    given += std::string(given.empty() ? "" : ", ") + "--onprem-currency";
  }
  if (given.empty()) return std::optional<cost::OnPremParams>();
  if (!defaults && (o.gpu_busy_w < 0 || o.gpu_idle_w < 0)) {
    return core::InvalidArgument("no on-prem defaults for " + o.gpu +
                                 ": pass at least --gpu-busy-w and --gpu-idle-w");
  }
  p.source = "user (" + given + ")" + (defaults ? "; otherwise " + defaults->source : "");
  GLEANER_RETURN_IF_ERROR(cost::ValidateOnPremParams(p));
  return std::optional<cost::OnPremParams>(p);
}

// This host's idle forecast for `gpu_model`, when its database has history
// of such GPUs; a database that cannot be read is said, not fatal.
std::optional<cost::IdleForecast> HistoryForecast(const std::string& data_dir,
                                                  const cost::CostSettings& site,
                                                  const std::string& gpu_model, core::TimePoint now,
                                                  std::ostream& err) {
  const std::string db = data_dir + "/gleaner.db";
  const core::Result<bool> kept = config::InDataDir(db);
  if (!kept.ok()) err << "gleaner: " << kept.status().message() << "\n";
  if (!kept.ok() || !*kept) return std::nullopt;
  auto store = store::SqliteStore::Open(db);
  core::Result<std::optional<cost::IdleForecast>> forecast =
      store.ok()
          ? server::ForecastIdleGpus(**store, site, gpu_model, now, server::kForecastLookback)
          : core::Result<std::optional<cost::IdleForecast>>(store.status());
  if (!forecast.ok()) {
    err << "gleaner: warning: in-house timing without history: " << forecast.status().message()
        << "\n";
    return std::nullopt;
  }
  return *forecast;
}

}  // namespace

CostCommands AddCostCommands(CLI::App& app, CostAdviseOptions& o, CostReportOptions& r) {
  CLI::App* cost = app.add_subcommand("cost", "What GPU time costs, and where to buy it");
  cost->require_subcommand(1);
  CLI::App* report = cost->add_subcommand(
      "report", "What idle, held-idle and harvested GPU time cost here, and who held it");
  report->add_option("--since", r.since, "Start: a span back from now (7d, 24h) or YYYY-MM-DD")
      ->capture_default_str();
  report->add_option("--until", r.until, "End: YYYY-MM-DD (default: now)");
  report->add_option("--by", r.by, "Tables to print: model, gpu, user, project, day")
      ->delimiter(',')
      ->check(CLI::IsMember({"model", "gpu", "user", "project", "day"}))
      ->capture_default_str();
  report
      ->add_option("--include", r.include,
                   "busy: price the owners' own work too, with each row's charge (chargeback)")
      ->delimiter(',')
      ->check(CLI::IsMember({"busy"}));
  report->add_option("--currency", r.currency, "USD or CNY (default: [cost] currency, else USD)");
  report->add_option("--config", r.config, "Config file (default: DATA_DIR/gleaner.toml)");
  report->add_flag("--json", r.json, "The gleaner.cost-report/v1 document instead of tables");
  CLI::App* advise = cost->add_subcommand(
      "advise", "Price a job in-house, on spot, on-demand and reserved, and recommend one");
  advise->add_option("--gpu", o.gpu, "GPU model, e.g. A100-80GB (docs/cost.md: matching)")
      ->required();
  advise->add_option("--count", o.count, "GPUs needed at once")->check(CLI::PositiveNumber);
  advise->add_option("--hours", o.hours, "Hours of work on those GPUs")->required();
  advise->add_option("--deadline", o.deadline, "Finish within: 48h, 2d, 90m");
  advise->add_option("--region", o.region, "Only prices from this region");
  advise->add_option("--currency", o.currency, "USD or CNY (default: [cost] currency, else USD)");
  advise->add_option("--catalog", o.catalogs, "A CSV of prices that adds or overrides rows");
  advise->add_option("--cny-per-usd", o.cny_per_usd,
                     "Exchange rate (default: [cost] cny_per_usd, else 7.2, assumed)");
  advise->add_option("--max-price-age-days", o.max_price_age_days,
                     "Warn about prices older than this");
  advise->add_option("--as-of", o.as_of, "Today for price ages, YYYY-MM-DD (default: today)");
  advise->add_option("--idle-gpu-hours-per-day", o.idle_gpu_hours_per_day,
                     "Idle GPU-hours per day expected in-house for this model");
  advise->add_option("--checkpoint-interval", o.checkpoint_interval,
                     "The job's checkpoint interval (default: Young/Daly optimum)");
  advise->add_option("--checkpoint-cost", o.checkpoint_cost, "Time to write a checkpoint");
  advise->add_option("--restart", o.restart, "Time to restart after a spot interruption");
  advise->add_option("--spot-interruption-rate", o.spot_interruption_percent,
                     "Spot interruptions, % of instances per month (default: the GPU's band)");
  advise->add_option("--onprem-capex", o.onprem_capex, "On-prem: price of one server");
  advise->add_option("--onprem-life-years", o.onprem_life_years, "On-prem: amortisation years");
  advise->add_option("--onprem-maintenance-rate", o.onprem_maintenance_rate,
                     "On-prem: maintenance per year, fraction of capex (0.1 = 10 %)");
  advise->add_option("--onprem-server-kw", o.onprem_server_kw, "On-prem: server maximum kW");
  advise->add_option("--onprem-load", o.onprem_load, "On-prem: average draw / maximum (0-1)");
  advise->add_option("--pue", o.pue, "On-prem: data-centre PUE");
  advise->add_option("--electricity-per-kwh", o.electricity_per_kwh,
                     "On-prem: electricity price per kWh, in --onprem-currency");
  advise->add_option("--gpus-per-server", o.gpus_per_server, "On-prem: GPUs per server");
  advise->add_option("--gpu-busy-w", o.gpu_busy_w, "On-prem: one GPU's draw when working, W");
  advise->add_option("--gpu-idle-w", o.gpu_idle_w, "On-prem: one GPU's draw when idle, W");
  advise->add_option("--onprem-currency", o.onprem_currency,
                     "On-prem: currency of capex and electricity, USD or CNY (default USD)");
  advise->add_flag("--single-instance", o.single_instance,
                   "All GPUs on one instance (one machine): no multi-instance rentals");
  advise->add_flag("--json", o.json, "JSON instead of text");
  advise->add_option("--config", o.config, "Config file (default: DATA_DIR/gleaner.toml)");
  advise->add_flag("!--no-history", o.use_history,
                   "Do not time in-house by this host's GPU history");
  return {advise, report};
}

int RunCostAdvise(const CostAdviseOptions& o, core::TimePoint now, std::ostream& out,
                  std::ostream& err) {
  auto config = config::LoadCommandConfig(config::DataDir(o.data_dir), o.config);
  if (!config.ok()) {
    err << "gleaner: " << config.status().message() << "\n";
    return kExitBadInput;
  }
  const cost::CostSettings& site = config->cost;
  cost::AdviceRequest req;
  req.gpu_model = o.gpu;
  req.gpu_count = o.count;
  req.hours = o.hours;
  req.region = o.region;
  req.single_instance = o.single_instance;
  req.rates = site.rates;
  if (o.cny_per_usd >= 0) req.rates.cny_per_usd = o.cny_per_usd;
  req.max_price_age_days =
      o.max_price_age_days >= 0 ? o.max_price_age_days : site.max_price_age_days;
  const auto currency = o.currency.empty() ? site.currency : cost::ParseCurrency(o.currency);
  if (!currency) {
    err << "gleaner: --currency: expected USD or CNY, got \"" << o.currency << "\"\n";
    return kExitUsage;
  }
  req.currency = *currency;
  req.today_days = cost::DaysFromUnixSeconds(core::ToUnixMicros(now) / 1'000'000);
  if (!o.as_of.empty()) {
    const auto d = cost::ParseIsoDate(o.as_of);
    if (!d) {
      err << "gleaner: --as-of: expected YYYY-MM-DD, got \"" << o.as_of << "\"\n";
      return kExitUsage;
    }
    req.today_days = *d;
  }
  struct DurationFlag {
    const char* flag;
    const std::string& text;
    std::optional<double>* target;
  };
  std::optional<double> deadline, interval, checkpoint_cost, restart;
  for (const DurationFlag& f :
       {DurationFlag{"--deadline", o.deadline, &deadline},
        DurationFlag{"--checkpoint-interval", o.checkpoint_interval, &interval},
        DurationFlag{"--checkpoint-cost", o.checkpoint_cost, &checkpoint_cost},
        DurationFlag{"--restart", o.restart, &restart}}) {
    if (f.text.empty()) continue;
    *f.target = cost::ParseHours(f.text);
    if (!*f.target) {
      err << "gleaner: " << f.flag << ": expected a duration above 0 such as 48h, 2d or 90m, got \""
          << f.text << "\"\n";
      return kExitUsage;
    }
  }
  req.deadline_h = deadline;
  req.checkpoint_interval_h = interval;
  if (checkpoint_cost) req.checkpoint_cost_h = *checkpoint_cost;
  if (restart) req.restart_h = *restart;
  if (o.idle_gpu_hours_per_day >= 0) req.idle_gpu_hours_per_day = o.idle_gpu_hours_per_day;
  if (o.spot_interruption_percent >= 0) {
    if (o.spot_interruption_percent >= 100) {
      err << "gleaner: --spot-interruption-rate: expected a percentage below 100\n";
      return kExitUsage;
    }
    req.spot_monthly_interruption = o.spot_interruption_percent / 100;
  }

  core::Result<std::optional<cost::OnPremParams>> onprem = OnPremFromFlags(o);
  if (!onprem.ok()) {
    err << "gleaner: " << onprem.status().message() << "\n";
    return kExitUsage;
  }
  req.onprem = *onprem;
  if (!req.onprem && site.onprem.count(o.gpu)) req.onprem = site.OnPremFor(o.gpu);
  if (o.use_history && !req.idle_gpu_hours_per_day) {
    req.idle_forecast = HistoryForecast(config::DataDir(o.data_dir), site, o.gpu, now, err);
  }

  std::vector<std::string> catalog_files = site.catalog_files;
  catalog_files.insert(catalog_files.end(), o.catalogs.begin(), o.catalogs.end());
  core::Result<cost::Catalog> catalog = config::LoadCatalog(catalog_files);
  if (!catalog.ok()) {
    err << "gleaner: " << catalog.status().message() << "\n";
    return catalog.status().code() == core::StatusCode::kNotFound ? kExitFailure : kExitBadInput;
  }
  core::Result<cost::Advice> advice = cost::Advise(*catalog, req);
  if (!advice.ok()) {
    err << "gleaner: " << advice.status().message() << "\n";
    return advice.status().code() == core::StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  if (!o.json) {
    PrintTable(*advice, out);
    return kExitOk;
  }
  out << cost::AdviceToJson(req, *advice).dump(2) << "\n";
  return kExitOk;
}

}  // namespace gleaner::cli
