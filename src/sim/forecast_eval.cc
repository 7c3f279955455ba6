#include "sim/forecast_eval.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <tuple>

#include "observe/idle_window_forecast.h"
#include "observe/usage_profile.h"

namespace gleaner::sim {
namespace {

using core::Duration;
using core::TimePoint;

// A forecast: more quiet time ahead with 80 %, 50 % and 20 % chance.
using Quantiles = std::array<Duration, 3>;
// The quantile levels those are (the 20th percentile is what 80 % exceed).
constexpr std::array<double, 3> kLevels = {0.2, 0.5, 0.8};

// Durations binned on a log scale (5 % wide), so that a quantile over
// every past quiet sample costs a pass over the bins, not a sort.
class LogHistogram {
 public:
  void Add(Duration d) {
    const double s = std::max(core::ToSecondsDouble(d), 0.0);
    const size_t bin =
        s < 1 ? 0 : std::min(bins_.size() - 1, 1 + static_cast<size_t>(std::log(s) / kLogGrowth));
    ++bins_[bin];
    ++count_;
  }
  int64_t count() const { return count_; }
  // The lower quantile, as its bin's lower edge.
  Duration Quantile(double q) const {
    const auto target = static_cast<int64_t>(std::floor(q * static_cast<double>(count_ - 1)));
    int64_t seen = 0;
    for (size_t b = 0; b < bins_.size(); ++b) {
      seen += bins_[b];
      if (seen > target) {
        return b == 0 ? Duration{}
                      : core::Duration(static_cast<int64_t>(
                            std::exp(static_cast<double>(b - 1) * kLogGrowth) * 1e6));
      }
    }
    return Duration{};
  }
  Quantiles Forecast() const { return {Quantile(0.2), Quantile(0.5), Quantile(0.8)}; }

 private:
  static constexpr double kLogGrowth = 0.04879;  // ln 1.05
  std::array<int64_t, 420> bins_{};              // up to 1.05^419 s: beyond any trace
  int64_t count_ = 0;
};

struct Tally {
  std::array<double, 3> pinball_s{};
  std::array<int64_t, 3> covered{};
  int64_t n = 0;

  void Add(const Quantiles& f, Duration actual) {
    const double y = core::ToSecondsDouble(actual);
    for (size_t k = 0; k < 3; ++k) {
      const double q = core::ToSecondsDouble(f[k]);
      pinball_s[k] += y >= q ? kLevels[k] * (y - q) : (1 - kLevels[k]) * (q - y);
      covered[k] += actual >= f[k] ? 1 : 0;
    }
    ++n;
  }
  ForecastScore Score(std::string name) const {
    ForecastScore s;
    s.name = std::move(name);
    if (n == 0) return s;
    const auto minutes = [&](size_t k) { return pinball_s[k] / static_cast<double>(n) / 60; };
    const auto share = [&](size_t k) {
      return static_cast<double>(covered[k]) / static_cast<double>(n);
    };
    s.pinball_p80_min = minutes(0);
    s.pinball_p50_min = minutes(1);
    s.pinball_p20_min = minutes(2);
    s.pinball_mean_min = (minutes(0) + minutes(1) + minutes(2)) / 3;
    s.covered_p80 = share(0);
    s.covered_p50 = share(1);
    s.covered_p20 = share(2);
    return s;
  }
};

// What remained of each quiet sample's spell: the time to the series' next
// busy sample, unknown where a gap or the end comes first.
std::vector<std::optional<Duration>> Remaining(const UtilizationSeries& s, double busy_pct,
                                               Duration gap) {
  std::vector<std::optional<Duration>> out(s.points.size());
  std::optional<TimePoint> next_busy;
  for (size_t i = s.points.size(); i-- > 0;) {
    const UtilizationPoint& p = s.points[i];
    if (p.utilization_pct >= busy_pct) {
      next_busy = p.at;
      continue;
    }
    if (i + 1 < s.points.size() && s.points[i + 1].at - p.at > gap) next_busy.reset();
    if (next_busy) out[i] = *next_busy - p.at;
  }
  return out;
}

// One series as the replay goes: the spell it is in.
struct SeriesState {
  std::optional<TimePoint> previous;    // the last sample
  std::optional<TimePoint> last_busy;   // the spell began with activity (a whole spell)
  std::optional<TimePoint> quiet_from;  // the spell's start: last busy, or the first quiet sample
  std::vector<std::pair<TimePoint, int>> quiet;  // the spell's samples, and their hour of week
};

}  // namespace

ForecastEvalReport EvaluateForecast(const std::vector<UtilizationSeries>& series, double busy_pct) {
  ForecastEvalReport report;
  report.series = static_cast<int64_t>(series.size());
  for (const UtilizationSeries& s : series) report.samples += static_cast<int64_t>(s.points.size());
  report.median_step = MedianStep(series);
  const Duration gap = std::max<Duration>(core::Seconds(30), 3 * report.median_step);
  report.max_sample_gap = gap;

  std::vector<std::vector<std::optional<Duration>>> remaining;
  std::vector<std::tuple<TimePoint, size_t, size_t>> order;
  for (size_t k = 0; k < series.size(); ++k) {
    remaining.push_back(Remaining(series[k], busy_pct, gap));
    for (size_t i = 0; i < series[k].points.size(); ++i) {
      order.emplace_back(series[k].points[i].at, k, i);
    }
  }
  std::sort(order.begin(), order.end());

  observe::IdleWindowForecast gleaner;
  LogHistogram spells;                              // whole spells' lengths
  LogHistogram all_remaining;                       // every past quiet sample's
  std::array<LogHistogram, 168> remaining_by_hour;  // the same, by hour of the week
  Tally ours, persistence, median_spell, climate, climate_by_hour;
  std::vector<SeriesState> state(series.size());
  for (const auto& [at, k, i] : order) {
    SeriesState& st = state[k];
    const core::GpuUuid id(series[k].id);
    if (st.previous && at - *st.previous > gap) st = SeriesState{};
    st.previous = at;
    if (series[k].points[i].utilization_pct >= busy_pct) {
      if (!st.quiet.empty()) {
        if (st.last_busy) {
          gleaner.AddSpell(id, at - *st.last_busy);
          spells.Add(at - *st.last_busy);
        }
        for (const auto& [t, hour] : st.quiet) {
          all_remaining.Add(at - t);
          remaining_by_hour[static_cast<size_t>(hour)].Add(at - t);
        }
      }
      st.quiet.clear();
      st.last_busy = st.quiet_from = at;
      continue;
    }
    if (!st.quiet_from) st.quiet_from = at;
    const int hour = observe::HourOfWeek(at);
    st.quiet.emplace_back(at, hour);
    if (!remaining[k][i]) continue;
    ++report.quiet_samples;
    const Duration quiet = at - *st.quiet_from;
    const std::optional<observe::QuietForecast> f = gleaner.Predict(id, quiet);
    if (!f) continue;
    ++report.scored;
    const Duration actual = *remaining[k][i];
    ours.Add({f->p80, f->p50, f->p20}, actual);
    persistence.Add({quiet, quiet, quiet}, actual);
    const Duration median = spells.Quantile(0.5);
    median_spell.Add({median, median, median}, actual);
    climate.Add(all_remaining.Forecast(), actual);
    const LogHistogram& same_hour = remaining_by_hour[static_cast<size_t>(hour)];
    climate_by_hour.Add(same_hour.count() > 0 ? same_hour.Forecast() : all_remaining.Forecast(),
                        actual);
  }
  report.forecasts = {ours.Score("gleaner"), persistence.Score("persistence"),
                      median_spell.Score("median_spell"), climate.Score("all_quiet_samples"),
                      climate_by_hour.Score("hour_of_week")};
  return report;
}

}  // namespace gleaner::sim
