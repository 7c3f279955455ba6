#include "cost/advisor.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>

#include "core/enum_names.h"
#include "core/format.h"
#include "cost/civil_date.h"
#include "cost/spot.h"

namespace gleaner::cost {
namespace {

constexpr PricingModel kModelOrder[] = {
    PricingModel::kSpot,         PricingModel::kOnDemand,   PricingModel::kCapacityBlock,
    PricingModel::kSubscription, PricingModel::kReserved1y, PricingModel::kReserved3y,
};

bool MeetsOrUnbounded(const AdviceRequest& r, double wall_h) {
  return !r.deadline_h || wall_h <= *r.deadline_h;
}

// Lower is more trustworthy: a low-confidence source weighs more than age.
int TrustRank(const AdviceOption& o) { return (o.low_confidence ? 2 : 0) + (o.stale ? 1 : 0); }

DeadlineVerdict Verdict(bool yes) { return yes ? DeadlineVerdict::kYes : DeadlineVerdict::kNo; }

// The on-demand price to weigh a reservation against: the same provider's
// and instance's, the one dated closest to the reservation (prices of one
// era); else the cheapest on-demand GPU-hour among the matching rows.
struct OnDemandReference {
  double per_gpu_hour = 0;  // in the request's currency
  std::string what;
};
std::optional<OnDemandReference> ReferenceFor(const PriceRow& reserved,
                                              const std::vector<PriceRow>& rows,
                                              const AdviceRequest& req) {
  const PriceRow* same = nullptr;
  const PriceRow* cheapest = nullptr;
  auto per_gpu = [&](const PriceRow& r) {
    return req.rates.Convert(r.price_per_instance_hour, r.currency, req.currency) / r.gpu_count;
  };
  for (const PriceRow& r : rows) {
    if (r.pricing_model != PricingModel::kOnDemand) continue;
    if (!cheapest || per_gpu(r) < per_gpu(*cheapest)) cheapest = &r;
    if (r.provider != reserved.provider || r.instance != reserved.instance) continue;
    if (!same || std::abs(r.date_days - reserved.date_days) <
                     std::abs(same->date_days - reserved.date_days)) {
      same = &r;
    }
  }
  if (same) {
    return OnDemandReference{
        per_gpu(*same), "on-demand " + same->instance + " of " + FormatIsoDate(same->date_days)};
  }
  if (cheapest) return OnDemandReference{per_gpu(*cheapest), "cheapest on-demand match"};
  return std::nullopt;
}

// Prices one catalog row for the request.
AdviceOption PriceRowOption(const PriceRow& row, const AdviceRequest& req,
                            const std::vector<PriceRow>& rows) {
  AdviceOption o;
  o.kind = std::string(PricingModelName(row.pricing_model));
  o.provider = row.provider;
  o.region = row.region;
  o.instance = row.instance;
  o.gpu_model = row.gpu_model;
  o.gpus_per_instance = row.gpu_count;
  o.instances = (req.gpu_count + row.gpu_count - 1) / row.gpu_count;
  o.price_per_instance_hour = row.price_per_instance_hour;
  o.price_currency = row.currency;
  o.source = row.source;
  o.date = FormatIsoDate(row.date_days);
  o.origin = row.origin;
  o.stale = req.today_days - row.date_days > req.max_price_age_days;
  const std::string cur(CurrencyName(req.currency));
  const double price = req.rates.Convert(row.price_per_instance_hour, row.currency, req.currency);
  if (row.currency != req.currency) {
    o.arithmetic.push_back(core::FormatFixed(row.price_per_instance_hour, 4) + " " +
                           std::string(CurrencyName(row.currency)) + "/h at " +
                           core::FormatFixed(req.rates.cny_per_usd, 4) +
                           " CNY per USD = " + core::FormatFixed(price, 4) + " " + cur + "/h");
  }
  const std::string head = std::to_string(o.instances) + " x " + row.instance + " (" +
                           std::to_string(row.gpu_count) + " GPU) x " +
                           core::FormatFixed(price, 4) + " " + cur + "/h";
  if (o.instances * row.gpu_count > req.gpu_count) {
    o.notes.push_back("whole instances: " + std::to_string(o.instances * row.gpu_count) +
                      " GPUs rented for " + std::to_string(req.gpu_count) + " needed");
  }
  switch (row.pricing_model) {
    case PricingModel::kOnDemand:
    case PricingModel::kCapacityBlock: {
      o.expected_hours = req.hours;
      o.expected_cost = o.instances * price * req.hours;
      o.arithmetic.push_back(head + " x " + core::FormatFixed(req.hours, 2) +
                             " h = " + FormatMoney(o.expected_cost) + " " + cur);
      o.meets_deadline = Verdict(MeetsOrUnbounded(req, o.expected_hours));
      if (row.pricing_model == PricingModel::kCapacityBlock) {
        o.notes.push_back("capacity block: book the window in advance; availability not checked");
      }
      break;
    }
    case PricingModel::kSubscription: {
      const double months = std::ceil(req.hours / 730.0);
      o.expected_hours = req.hours;
      o.expected_cost = o.instances * price * 730.0 * months;
      o.arithmetic.push_back(head + " x 730 h/month x " + core::FormatFixed(months, 0) +
                             " month(s) prepaid = " + FormatMoney(o.expected_cost) + " " + cur);
      o.meets_deadline = Verdict(MeetsOrUnbounded(req, o.expected_hours));
      o.notes.push_back("subscription is paid by the month, whatever the job uses");
      break;
    }
    case PricingModel::kSpot: {
      const SpotBand band = DefaultSpotBand(row.gpu_model);
      const double fraction =
          req.spot_monthly_interruption ? *req.spot_monthly_interruption : band.monthly_fraction;
      const SpotEstimate e = EstimateSpot(req.hours, o.instances, fraction, req.checkpoint_cost_h,
                                          req.restart_h, req.checkpoint_interval_h);
      o.expected_hours = e.expected_wall_h;
      o.expected_cost = o.instances * price * e.expected_wall_h;
      o.arithmetic.push_back("interruptions " + core::FormatFixed(fraction * 100, 1) +
                             " %/month per instance -> MTBF 730 / -ln(1 - " +
                             core::FormatFixed(fraction, 3) + ") / " + std::to_string(o.instances) +
                             " instance(s) = " + core::FormatFixed(e.job_mtbf_h, 1) + " h");
      o.arithmetic.push_back("Young/Daly interval sqrt(2 x " +
                             core::FormatFixed(req.checkpoint_cost_h, 3) + " h x " +
                             core::FormatFixed(e.job_mtbf_h, 1) +
                             " h) = " + core::FormatFixed(e.optimal_interval_h, 2) + " h; used " +
                             core::FormatFixed(e.interval_h, 2) + " h");
      o.arithmetic.push_back("wall = " + core::FormatFixed(req.hours, 2) + " h work + " +
                             core::FormatFixed(e.checkpoint_overhead_h, 3) + " h checkpoints + " +
                             core::FormatFixed(e.expected_interruptions, 4) + " interruptions x (" +
                             core::FormatFixed(std::min(e.interval_h, req.hours) / 2, 3) +
                             " h lost + " + core::FormatFixed(req.restart_h, 3) +
                             " h restart) = " + core::FormatFixed(e.expected_wall_h, 3) + " h");
      o.arithmetic.push_back(head + " x " + core::FormatFixed(e.expected_wall_h, 3) +
                             " h = " + FormatMoney(o.expected_cost) + " " + cur);
      o.meets_deadline = Verdict(MeetsOrUnbounded(req, o.expected_hours));
      o.notes.push_back("interruption band " + (req.spot_monthly_interruption
                                                    ? std::string("given by the user")
                                                    : band.label + ", " + band.source));
      const double p_any = 1.0 - std::exp(-(req.hours / e.job_mtbf_h));
      o.notes.push_back(
          "chance of at least one interruption: " + core::FormatFixed(p_any * 100, 1) +
          " %; capacity may be unavailable, which this estimate ignores");
      break;
    }
    case PricingModel::kReserved1y:
    case PricingModel::kReserved3y: {
      const double years = row.pricing_model == PricingModel::kReserved1y ? 1 : 3;
      o.expected_hours = req.hours;
      o.expected_cost = o.instances * price * req.hours;
      o.eligible = false;
      o.arithmetic.push_back(head + " x " + core::FormatFixed(req.hours, 2) +
                             " h = " + FormatMoney(o.expected_cost) + " " + cur +
                             " (this job's share of the commitment)");
      const double commitment = o.instances * price * kHoursPerYear * years;
      o.arithmetic.push_back("commitment " + std::to_string(o.instances) + " x " +
                             core::FormatFixed(price, 4) + " x 8766 h x " +
                             core::FormatFixed(years, 0) + " y = " + FormatMoney(commitment) + " " +
                             cur);
      if (const std::optional<OnDemandReference> ref = ReferenceFor(row, rows, req)) {
        const double per_gpu = price / row.gpu_count;
        const double breakeven = per_gpu / ref->per_gpu_hour;
        o.arithmetic.push_back("break-even utilisation = " + core::FormatFixed(per_gpu, 4) + " / " +
                               core::FormatFixed(ref->per_gpu_hour, 4) + " (" + ref->what +
                               ", per GPU-hour) = " + core::FormatFixed(breakeven * 100, 1) + " %");
        o.notes.push_back("worth it only if the reservation is busy more than " +
                          core::FormatFixed(breakeven * 100, 1) + " % of the term");
      }
      o.meets_deadline = Verdict(MeetsOrUnbounded(req, o.expected_hours));
      o.notes.push_back("a long commitment: not recommended for a single job");
      break;
    }
  }
  o.low_confidence = row.confidence == "low";
  if (o.instances > 1) {
    o.notes.push_back("spread over " + std::to_string(o.instances) +
                      " instances: the job must run across machines");
  }
  if (!row.confidence.empty() && row.confidence != "high") {
    o.notes.push_back("confidence " + row.confidence);
  }
  if (!row.notes.empty()) o.notes.push_back(row.notes);
  return o;
}

// "Tue 13:30": an hour of the week (0 = Monday 00:00) as a weekday and time.
std::string FormatHourOfWeek(double hour_of_week) {
  static constexpr const char* kWeekdays[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  constexpr int kMinutesPerDay = 24 * 60;
  // Clamped so that a time a hair before the week's end cannot round into day 8.
  const int minute =
      std::min(static_cast<int>(std::floor(hour_of_week * 60)), 7 * kMinutesPerDay - 1);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s %02d:%02d", kWeekdays[minute / kMinutesPerDay],
                minute % kMinutesPerDay / 60, minute % 60);
  return buf;
}

// Idle GPUs are counts, and "now" must fall inside the one week the
// profile covers; the message names the field, as the forecast has no flag.
core::Status ValidateIdleForecast(const IdleForecast& f) {
  for (size_t h = 0; h < f.idle_gpus.size(); ++h) {
    const double idle = f.idle_gpus[h];
    if (!std::isfinite(idle) || idle < 0) {
      return core::InvalidArgument("idle_forecast.idle_gpus[" + std::to_string(h) +
                                   "]: expected a finite number at least 0, got " +
                                   core::FormatFixed(idle, 3));
    }
  }
  const double now = f.now_hour_of_week;
  if (!(now >= 0 && now < static_cast<double>(kHoursPerWeek))) {
    return core::InvalidArgument(
        "idle_forecast.now_hour_of_week: expected from 0 to below 168, got " +
        core::FormatFixed(now, 3));
  }
  return core::Status::Ok();
}

// The in-house wait walked through an IdleForecast.
struct ForecastWalk {
  bool done = false;       // the work was done within the horizon
  double wall_h = 0;       // wall hours from now until done, else the horizon
  double work_done_h = 0;  // hours of the job's work done by then
};

// Walks wall-clock from now one hour of the week at a time, the first step
// only the rest of the current hour. In hour h the job does min(count,
// idle[h]) / count hours of work per wall hour: the expected share of the
// idle GPUs it gets when it checkpoints and runs in idle windows as they
// come (a backlog spreads over what is free). Done when the work reaches
// `hours`, interpolated within the last step; given up at the horizon, so an
// all-zero forecast ends there instead of looping or dividing by zero.
ForecastWalk WalkIdleForecast(const IdleForecast& f, int count, double hours) {
  ForecastWalk walk;
  const double gpus = count;
  double clock = f.now_hour_of_week;  // hour of the week, wrapped into [0, 168)
  while (walk.wall_h < kIdleForecastHorizonH) {
    const double hour_start = std::floor(clock);
    const double step = std::min(hour_start + 1 - clock, kIdleForecastHorizonH - walk.wall_h);
    const double rate = std::min(gpus, f.idle_gpus[static_cast<size_t>(hour_start)]) / gpus;
    const double work_left = hours - walk.work_done_h;
    // work_left > 0, so reaching it needs rate > 0: the division is safe.
    if (rate * step >= work_left) {
      walk.done = true;
      walk.wall_h += work_left / rate;
      walk.work_done_h = hours;
      return walk;
    }
    walk.work_done_h += rate * step;
    walk.wall_h += step;
    clock = hour_start + 1 < static_cast<double>(kHoursPerWeek) ? hour_start + 1 : 0;
  }
  return walk;
}

// Times the in-house option by the idle forecast. A job the forecast does
// not finish within the horizon is expected never to finish: it misses any
// deadline (given or not) and is not recommended.
void TimeByIdleForecast(const AdviceRequest& req, AdviceOption& o) {
  const IdleForecast& f = *req.idle_forecast;
  const std::string basis = f.basis.empty() ? "" : " (" + f.basis + ")";
  const double mean_idle = std::accumulate(f.idle_gpus.begin(), f.idle_gpus.end(), 0.0) /
                           static_cast<double>(kHoursPerWeek);
  o.arithmetic.push_back("idle forecast: " + core::FormatFixed(mean_idle, 2) +
                         " idle GPUs on average over the week; now is hour " +
                         core::FormatFixed(f.now_hour_of_week, 2) + " of the week (" +
                         FormatHourOfWeek(f.now_hour_of_week) + " UTC)");
  const ForecastWalk walk = WalkIdleForecast(f, req.gpu_count, req.hours);
  const std::string count = std::to_string(req.gpu_count);
  const std::string per_hour =
      "each wall hour doing min(" + count + ", idle GPUs) / " + count + " h of work";
  o.expected_hours = walk.wall_h;
  if (walk.done) {
    const double end =
        std::fmod(f.now_hour_of_week + walk.wall_h, static_cast<double>(kHoursPerWeek));
    o.arithmetic.push_back("wait: " + core::FormatFixed(walk.wall_h, 2) +
                           " wall hours by the idle forecast" + basis + ", " + per_hour +
                           " until " + core::FormatFixed(req.hours, 2) + " h are done: ends " +
                           FormatHourOfWeek(end) + " UTC");
    o.meets_deadline = Verdict(MeetsOrUnbounded(req, o.expected_hours));
    o.notes.push_back(
        "assumes the job can run in the idle windows as they come (checkpointed) and a backlog "
        "spreads over whatever is free: an expected value, not a schedule");
  } else {
    o.arithmetic.push_back("wait: over " + core::FormatFixed(kIdleForecastHorizonH, 0) +
                           " wall hours by the idle forecast" + basis + ": only " +
                           core::FormatFixed(walk.work_done_h, 2) + " of " +
                           core::FormatFixed(req.hours, 2) + " h of work done by then, " +
                           per_hour);
    o.meets_deadline = DeadlineVerdict::kNo;
    o.eligible = false;
    o.notes.push_back(
        "the idle forecast does not finish the job within " +
        core::FormatFixed(kIdleForecastHorizonH / static_cast<double>(kHoursPerWeek), 0) +
        " weeks: not recommended");
  }
}

std::optional<AdviceOption> InHouseOption(const AdviceRequest& req) {
  std::optional<OnPremParams> params = req.onprem ? req.onprem : DefaultOnPremParams(req.gpu_model);
  if (!params) return std::nullopt;
  const OnPremCost c = ComputeOnPremCost(*params);
  AdviceOption o;
  o.kind = "in-house";
  o.gpu_model = req.gpu_model;
  o.source = params->source;
  o.price_currency = params->currency;
  o.price_per_instance_hour = c.marginal_per_gpu_hour;
  const std::string cur(CurrencyName(req.currency));
  const std::string pcur(CurrencyName(params->currency));
  const double marginal =
      req.rates.Convert(c.marginal_per_gpu_hour, params->currency, req.currency);
  const double gpu_hours = req.gpu_count * req.hours;
  o.expected_cost = gpu_hours * marginal;
  o.arithmetic.push_back("marginal = (" + core::FormatFixed(params->gpu_busy_w, 0) + " W - " +
                         core::FormatFixed(params->gpu_idle_w, 0) + " W) / 1000 x PUE " +
                         core::FormatFixed(params->pue, 2) + " x " +
                         core::FormatFixed(params->electricity_per_kwh, 3) + " " + pcur +
                         "/kWh = " + core::FormatFixed(c.marginal_per_gpu_hour, 4) + " " + pcur +
                         " per GPU-hour" +
                         (params->currency == req.currency
                              ? std::string()
                              : " = " + core::FormatFixed(marginal, 4) + " " + cur + " at " +
                                    core::FormatFixed(req.rates.cny_per_usd, 4) + " CNY per USD"));
  o.arithmetic.push_back(
      std::to_string(req.gpu_count) + " GPU x " + core::FormatFixed(req.hours, 2) + " h x " +
      core::FormatFixed(marginal, 4) + " = " + FormatMoney(o.expected_cost) + " " + cur);
  if (params->server_capex > 0) {
    o.notes.push_back(
        "owned GPU-hour costs " +
        core::FormatFixed(req.rates.Convert(c.per_gpu_hour, params->currency, req.currency), 4) +
        " " + cur + " in full (capex, maintenance, power); capex is sunk, so an " +
        "idle hour costs only the extra energy");
  }
  if (req.idle_forecast) {
    TimeByIdleForecast(req, o);
  } else if (req.idle_gpu_hours_per_day && *req.idle_gpu_hours_per_day > 0) {
    const double days = gpu_hours / *req.idle_gpu_hours_per_day;
    o.expected_hours = days * 24;
    o.arithmetic.push_back("wait = " + core::FormatFixed(gpu_hours, 1) + " GPU-h / " +
                           core::FormatFixed(*req.idle_gpu_hours_per_day, 1) +
                           " idle GPU-h per day x 24 = " + core::FormatFixed(o.expected_hours, 1) +
                           " h");
    o.meets_deadline = Verdict(MeetsOrUnbounded(req, o.expected_hours));
    o.notes.push_back("assumes the job can run in the idle windows as they come (checkpointed)");
  } else {
    o.expected_hours = req.hours;
    o.meets_deadline = DeadlineVerdict::kUnknown;
    o.notes.push_back("when idle GPUs free up is unknown: pass --idle-gpu-hours-per-day");
  }
  return o;
}

}  // namespace

constexpr auto kDeadlineVerdictNames = core::MakeEnumNames<DeadlineVerdict>({
    {DeadlineVerdict::kYes, "yes"},
    {DeadlineVerdict::kNo, "no"},
    {DeadlineVerdict::kUnknown, "unknown"},
});

std::string_view DeadlineVerdictName(DeadlineVerdict v) { return kDeadlineVerdictNames.Name(v); }

std::optional<double> ParseHours(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double unit_h = 1;
  std::string number(text);
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
  // Plain decimals only: from_chars would also take "inf", "nan" and
  // "1e300", spans no question about cost can mean.
  if (number.empty() || number.size() > 16 ||
      number.find_first_not_of("0123456789.") != std::string::npos) {
    return std::nullopt;
  }
  double v = 0;
  const auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
  if (ec != std::errc() || p != number.data() + number.size() || !(v > 0)) return std::nullopt;
  const double hours = v * unit_h;
  if (hours > kMaxSpanHours) return std::nullopt;
  return hours;
}

std::string FormatMoney(double amount) { return core::FormatFixed(amount, 2); }

core::Result<Advice> Advise(const Catalog& catalog, const AdviceRequest& req) {
  if (req.gpu_count < 1) return core::InvalidArgument("--count must be at least 1");
  if (!(req.hours > 0)) return core::InvalidArgument("--hours must be above 0");
  if (req.deadline_h && !(*req.deadline_h > 0)) {
    return core::InvalidArgument("--deadline must be above 0");
  }
  if (!(req.rates.cny_per_usd > 0)) return core::InvalidArgument("--cny-per-usd must be above 0");
  if (req.onprem) GLEANER_RETURN_IF_ERROR(ValidateOnPremParams(*req.onprem));
  if (req.idle_forecast) GLEANER_RETURN_IF_ERROR(ValidateIdleForecast(*req.idle_forecast));
  GLEANER_ASSIGN_OR_RETURN(std::vector<PriceRow> rows, catalog.Find(req.gpu_model, req.region));

  Advice advice;
  advice.currency = req.currency;
  if (std::optional<AdviceOption> in_house = InHouseOption(req)) {
    advice.options.push_back(std::move(*in_house));
  }
  for (PricingModel model : kModelOrder) {
    std::optional<AdviceOption> best;
    for (const PriceRow& r : rows) {
      if (r.pricing_model != model) continue;
      if (req.single_instance && r.gpu_count < req.gpu_count) continue;
      AdviceOption o = PriceRowOption(r, req, rows);
      // Trusted prices first (not low confidence, then not stale); among
      // equals, the cheaper, then catalog order.
      if (!best || TrustRank(o) < TrustRank(*best) ||
          (TrustRank(o) == TrustRank(*best) && o.expected_cost < best->expected_cost)) {
        best = std::move(o);
      }
    }
    if (!best) continue;
    if (best->low_confidence) {
      advice.warnings.push_back(best->kind + " price (" + best->origin +
                                ") has low confidence and no better-sourced one matches; "
                                "confirm it before relying on it");
    }
    if (best->stale) {
      advice.warnings.push_back(best->kind + " price from " + best->date + " (" + best->origin +
                                ") is older than " + std::to_string(req.max_price_age_days) +
                                " days and no fresher one matches; check it");
      best->notes.push_back("stale: older than " + std::to_string(req.max_price_age_days) +
                            " days");
    }
    advice.options.push_back(std::move(*best));
  }

  for (size_t i = 0; i < advice.options.size(); ++i) {
    const AdviceOption& o = advice.options[i];
    if (!o.eligible || o.meets_deadline != DeadlineVerdict::kYes) continue;
    if (!advice.recommended ||
        o.expected_cost < advice.options[*advice.recommended].expected_cost) {
      advice.recommended = i;
    }
  }
  const std::string cur(CurrencyName(req.currency));
  if (advice.recommended) {
    const AdviceOption& o = advice.options[*advice.recommended];
    advice.recommendation =
        o.kind + (o.provider.empty() ? "" : " on " + o.provider + " " + o.instance) + ": " +
        FormatMoney(o.expected_cost) + " " + cur + ", the cheapest option " +
        (req.deadline_h
             ? "expected to finish within " + core::FormatFixed(*req.deadline_h, 1) + " h"
             : "(no deadline given)");
  } else {
    advice.recommendation = "no option is known to meet the deadline";
  }
  for (const AdviceOption& o : advice.options) {
    if (o.kind == "in-house" && o.meets_deadline == DeadlineVerdict::kUnknown &&
        (!advice.recommended ||
         o.expected_cost < advice.options[*advice.recommended].expected_cost)) {
      advice.warnings.push_back("in-house idle time would cost " + FormatMoney(o.expected_cost) +
                                " " + cur +
                                " if enough idle GPUs free up in time; pass "
                                "--idle-gpu-hours-per-day to check the deadline");
    }
  }
  return advice;
}

}  // namespace gleaner::cost
