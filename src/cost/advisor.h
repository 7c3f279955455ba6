#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "cost/catalog.h"
#include "cost/onprem.h"

namespace gleaner::cost {

inline constexpr size_t kHoursPerWeek = 168;
// How far ahead the in-house wait is walked through an IdleForecast: a job
// not done by then is taken as never done (8 weeks).
inline constexpr double kIdleForecastHorizonH = 8 * kHoursPerWeek;

// What the host's usage profiles expect: idle GPUs of the model in each
// hour of the week (0 = Monday 00:00 UTC), learned from history.
struct IdleForecast {
  // Expected idle GPUs (may be fractional) in each hour of the week.
  std::array<double, kHoursPerWeek> idle_gpus{};
  // Where "now" falls, in [0, 168), fractional.
  double now_hour_of_week = 0;
  // In words, e.g. "hour-of-week profiles of 8 GPUs over 3.2 weeks".
  std::string basis;
};

// A job, or a backlog summed into one, to place: in-house or in a cloud.
struct AdviceRequest {
  std::string gpu_model;             // matched by GpuModelMatches
  int gpu_count = 1;                 // GPUs the job needs at once, >= 1
  double hours = 0;                  // hours of work on those GPUs, > 0
  std::optional<double> deadline_h;  // from now; none = no deadline
  std::string region;                // "" = any region
  bool single_instance = false;      // the GPUs must share one instance (one machine)
  Currency currency = Currency::kUsd;
  ExchangeRates rates;
  int64_t today_days = 0;            // "now" for price ages (days since 1970)
  int64_t max_price_age_days = 365;  // older prices are stale: warned, used last
  // In-house: expected idle GPU-hours per day of this model; none = unknown.
  std::optional<double> idle_gpu_hours_per_day;
  // In-house: when idle GPUs of this model are expected, hour by hour; takes
  // precedence over idle_gpu_hours_per_day. Entries must be finite and >= 0.
  std::optional<IdleForecast> idle_forecast;
  std::optional<OnPremParams> onprem;  // none = DefaultOnPremParams(gpu_model)
  // Spot: checkpoint write time, restart time after an interruption, the
  // job's checkpoint interval (none = Young/Daly optimum), and the monthly
  // interruption fraction (none = DefaultSpotBand).
  double checkpoint_cost_h = 5.0 / 60;
  double restart_h = 10.0 / 60;
  std::optional<double> checkpoint_interval_h;
  std::optional<double> spot_monthly_interruption;
};

enum class DeadlineVerdict { kYes, kNo, kUnknown };
std::string_view DeadlineVerdictName(DeadlineVerdict v);  // "yes", "no", "unknown"

// One way to run the job, priced.
struct AdviceOption {
  std::string kind;  // "in-house" or a PricingModelName
  std::string provider, region, instance, gpu_model;
  int instances = 0;  // whole instances rented (0 for in-house)
  int gpus_per_instance = 0;
  double price_per_instance_hour = 0;  // in price_currency, as in the catalog
  Currency price_currency = Currency::kUsd;
  double expected_cost = 0;   // in the request's currency
  double expected_hours = 0;  // wall hours until done (wait included for in-house)
  DeadlineVerdict meets_deadline = DeadlineVerdict::kUnknown;
  bool eligible = true;         // may be recommended (false: a long commitment, or
                                // in-house that the idle forecast never finishes)
  bool stale = false;           // price older than max_price_age_days
  bool low_confidence = false;  // the catalog row's confidence is "low"
  std::string source;
  std::string date;                     // YYYY-MM-DD of the price, "" for in-house
  std::string origin;                   // catalog FILE:LINE
  std::vector<std::string> arithmetic;  // how expected_cost was reached
  std::vector<std::string> notes;
};

struct Advice {
  Currency currency = Currency::kUsd;
  std::vector<AdviceOption> options;  // in-house, spot, on-demand, capacity-block,
                                      // subscription, reserved-1y, reserved-3y
  std::optional<size_t> recommended;  // index into options
  std::string recommendation;         // why, in one sentence
  std::vector<std::string> warnings;  // stale prices and other caveats
};

// Prices the job every way the catalog allows: per pricing model, the
// cheapest row among the most trusted (rows of low confidence last, then
// stale rows; each such choice is warned about), plus in-house time at its
// marginal cost. Recommends the cheapest eligible option that meets the
// deadline (any, without one). InvalidArgument for a bad request; NotFound
// "no price for X in region Y" when the catalog has no row for the model.
core::Result<Advice> Advise(const Catalog& catalog, const AdviceRequest& request);

// The longest span a question about cost may name: ten years.
inline constexpr double kMaxSpanHours = 10 * 366 * 24;

// Hours in "48h", "2d", "90m", "3600s" or a bare number of hours, written
// as plain decimals; nullopt unless above 0 and at most kMaxSpanHours.
std::optional<double> ParseHours(std::string_view text);

// "1234.57" : money with two decimals.
std::string FormatMoney(double amount);

}  // namespace gleaner::cost
