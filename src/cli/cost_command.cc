#include "cli/cost_command.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>

#include "cli/exit_codes.h"
#include "cost/advisor.h"
#include "cost/catalog.h"
#include "cost/civil_date.h"

namespace gleaner::cli {
namespace {

// Hours in "48h", "2d", "90m", "3600s" or a bare number of hours.
std::optional<double> ParseHours(const std::string& text) {
  if (text.empty()) return std::nullopt;
  double unit_h = 1;
  std::string number = text;
  switch (text.back()) {
    case 'h':
      number.pop_back();
      break;
    case 'd':
      unit_h = 24;
      number.pop_back();
      break;
    case 'm':
      unit_h = 1.0 / 60;
      number.pop_back();
      break;
    case 's':
      unit_h = 1.0 / 3600;
      number.pop_back();
      break;
    default:
      break;
  }
  double v = 0;
  const auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
  if (number.empty() || ec != std::errc() || p != number.data() + number.size() || !(v > 0)) {
    return std::nullopt;
  }
  return v * unit_h;
}

core::Result<cost::Catalog> LoadCatalog(const std::vector<std::string>& files) {
  GLEANER_ASSIGN_OR_RETURN(cost::Catalog catalog, cost::Catalog::Parse(cost::BuiltinCatalogCsv(),
                                                                       cost::kBuiltinCatalogName));
  for (const std::string& path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return core::NotFound("cannot read the catalog " + path);
    std::stringstream text;
    text << in.rdbuf();
    GLEANER_ASSIGN_OR_RETURN(cost::Catalog user, cost::Catalog::Parse(text.str(), path));
    catalog.Merge(user);
  }
  return catalog;
}

nlohmann::ordered_json OptionJson(const cost::AdviceOption& o, cost::Currency currency) {
  nlohmann::ordered_json j = {
      {"kind", o.kind},
      {"expected_cost", std::round(o.expected_cost * 100) / 100},
      {"currency", cost::CurrencyName(currency)},
      {"expected_hours", std::round(o.expected_hours * 1000) / 1000},
      {"meets_deadline", cost::DeadlineVerdictName(o.meets_deadline)},
      {"eligible", o.eligible},
      {"source", o.source},
      {"date", o.date},
      {"stale", o.stale},
      {"low_confidence", o.low_confidence},
      {"arithmetic", o.arithmetic},
      {"notes", o.notes},
  };
  if (o.kind == "in-house") {
    j["marginal_cost_per_gpu_hour"] = std::round(o.price_per_instance_hour * 1e4) / 1e4;
    j["price_currency"] = cost::CurrencyName(o.price_currency);
  } else {
    j["provider"] = o.provider;
    j["region"] = o.region;
    j["instance"] = o.instance;
    j["gpu_model"] = o.gpu_model;
    j["instances"] = o.instances;
    j["gpus_per_instance"] = o.gpus_per_instance;
    j["price_per_instance_hour"] = o.price_per_instance_hour;
    j["price_currency"] = cost::CurrencyName(o.price_currency);
    j["catalog_row"] = o.origin;
  }
  return j;
}

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

}  // namespace

CLI::App* AddCostCommands(CLI::App& app, CostAdviseOptions& o) {
  CLI::App* cost = app.add_subcommand("cost", "What GPU time costs, and where to buy it");
  cost->require_subcommand(1);
  CLI::App* advise = cost->add_subcommand(
      "advise", "Price a job in-house, on spot, on-demand and reserved, and recommend one");
  advise->add_option("--gpu", o.gpu, "GPU model, e.g. A100-80GB (docs/cost.md: matching)")
      ->required();
  advise->add_option("--count", o.count, "GPUs needed at once")->check(CLI::PositiveNumber);
  advise->add_option("--hours", o.hours, "Hours of work on those GPUs")->required();
  advise->add_option("--deadline", o.deadline, "Finish within: 48h, 2d, 90m");
  advise->add_option("--region", o.region, "Only prices from this region");
  advise->add_option("--currency", o.currency, "USD or CNY");
  advise->add_option("--catalog", o.catalogs, "A CSV of prices that adds or overrides rows");
  advise->add_option("--cny-per-usd", o.cny_per_usd, "Exchange rate (default 7.2, assumed)");
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
  return advise;
}

int RunCostAdvise(const CostAdviseOptions& o, int64_t today_days, std::ostream& out,
                  std::ostream& err) {
  cost::AdviceRequest req;
  req.gpu_model = o.gpu;
  req.gpu_count = o.count;
  req.hours = o.hours;
  req.region = o.region;
  req.single_instance = o.single_instance;
  req.rates.cny_per_usd = o.cny_per_usd;
  req.max_price_age_days = o.max_price_age_days;
  const auto currency = cost::ParseCurrency(o.currency);
  if (!currency) {
    err << "gleaner: --currency: expected USD or CNY, got \"" << o.currency << "\"\n";
    return kExitUsage;
  }
  req.currency = *currency;
  req.today_days = today_days;
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
    *f.target = ParseHours(f.text);
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

  core::Result<cost::Catalog> catalog = LoadCatalog(o.catalogs);
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
  nlohmann::ordered_json j;
  j["request"] = {
      {"gpu", o.gpu},
      {"count", o.count},
      {"hours", o.hours},
      {"deadline_hours",
       deadline ? nlohmann::ordered_json(*deadline) : nlohmann::ordered_json(nullptr)},
      {"region", o.region},
      {"single_instance", o.single_instance},
      {"as_of", cost::FormatIsoDate(req.today_days)},
      {"cny_per_usd", req.rates.cny_per_usd},
      {"max_price_age_days", req.max_price_age_days},
  };
  j["currency"] = cost::CurrencyName(advice->currency);
  j["options"] = nlohmann::ordered_json::array();
  for (const cost::AdviceOption& opt : advice->options) {
    j["options"].push_back(OptionJson(opt, advice->currency));
  }
  if (advice->recommended) {
    const cost::AdviceOption& r = advice->options[*advice->recommended];
    j["recommendation"] = {{"kind", r.kind},
                           {"provider", r.provider},
                           {"instance", r.instance},
                           {"expected_cost", std::round(r.expected_cost * 100) / 100},
                           {"currency", cost::CurrencyName(advice->currency)},
                           {"reason", advice->recommendation}};
  } else {
    j["recommendation"] = {{"kind", nullptr}, {"reason", advice->recommendation}};
  }
  j["warnings"] = advice->warnings;
  out << j.dump(2) << "\n";
  return kExitOk;
}

}  // namespace gleaner::cli
