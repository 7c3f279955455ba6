#include "sim/idle_eval.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "observe/idle_classifier.h"

namespace gleaner::sim {
namespace {

using core::Duration;
using core::TimePoint;

constexpr Duration k10m = core::Seconds(600);
constexpr Duration k30m = core::Seconds(1800);

struct Tally {
  int64_t tp10 = 0, fp10 = 0, fn10 = 0, tp30 = 0, fp30 = 0, fn30 = 0, idle = 0;
  Duration quiet_time{}, captured_time{};
};

double Ratio(int64_t a, int64_t b) {
  return b == 0 ? 0 : static_cast<double>(a) / static_cast<double>(b);
}
double F1(double p, double r) { return p + r == 0 ? 0 : 2 * p * r / (p + r); }

IdleScore Score(std::string name, const Tally& t) {
  IdleScore s;
  s.name = std::move(name);
  s.precision_10m = Ratio(t.tp10, t.tp10 + t.fp10);
  s.recall_10m = Ratio(t.tp10, t.tp10 + t.fn10);
  s.f1_10m = F1(s.precision_10m, s.recall_10m);
  s.precision_30m = Ratio(t.tp30, t.tp30 + t.fp30);
  s.recall_30m = Ratio(t.tp30, t.tp30 + t.fn30);
  s.f1_30m = F1(s.precision_30m, s.recall_30m);
  s.idle_time_captured = t.quiet_time.count() == 0 ? 0
                                                   : static_cast<double>(t.captured_time.count()) /
                                                         static_cast<double>(t.quiet_time.count());
  s.idle_verdicts = t.idle;
  return s;
}

// What really happened after each sample of one series.
struct Truth {
  std::vector<int> stays_quiet_10m;  // 1, 0, or -1 (too close to the end)
  std::vector<int> stays_quiet_30m;
  std::vector<Duration> quiet_time;  // time until the next sample, if under the threshold
};

Truth Judge(const UtilizationSeries& s, double threshold, Duration max_gap) {
  const size_t n = s.points.size();
  Truth t{std::vector<int>(n), std::vector<int>(n), std::vector<Duration>(n)};
  const TimePoint end = s.points.back().at;
  TimePoint next_busy = TimePoint::max();
  for (size_t i = n; i-- > 0;) {
    const UtilizationPoint& p = s.points[i];
    t.stays_quiet_10m[i] = p.at + k10m > end ? -1 : (next_busy > p.at + k10m ? 1 : 0);
    t.stays_quiet_30m[i] = p.at + k30m > end ? -1 : (next_busy > p.at + k30m ? 1 : 0);
    if (i + 1 < n && p.utilization_pct < threshold) {
      t.quiet_time[i] = std::min(s.points[i + 1].at - p.at, max_gap);
    }
    if (p.utilization_pct >= threshold) next_busy = p.at;
  }
  return t;
}

void Count(Tally& tally, const Truth& truth, size_t i, bool idle) {
  if (idle) {
    ++tally.idle;
    tally.captured_time += truth.quiet_time[i];
  }
  tally.quiet_time += truth.quiet_time[i];
  for (auto [stays, tp, fp, fn] :
       {std::tuple{truth.stays_quiet_10m[i], &tally.tp10, &tally.fp10, &tally.fn10},
        std::tuple{truth.stays_quiet_30m[i], &tally.tp30, &tally.fp30, &tally.fn30}}) {
    if (stays < 0) continue;
    if (idle && stays == 1) ++*tp;
    if (idle && stays == 0) ++*fp;
    if (!idle && stays == 1) ++*fn;
  }
}

// A baseline's verdict at sample i: every sample in (t - window, t] passes
// `quiet`, and continuous data reaches back to the window's start (a sample
// stands for the interval since the one before it).
template <typename Quiet>
bool WindowRule(const UtilizationSeries& s, size_t i, Duration window, Duration max_gap,
                Quiet quiet) {
  const TimePoint from = s.points[i].at - window;
  for (size_t j = i + 1; j-- > 0;) {
    if (!quiet(s.points[j].utilization_pct)) return false;
    if (window.count() == 0) return true;
    if (j == 0 || s.points[j].at - s.points[j - 1].at > max_gap) return false;
    if (s.points[j - 1].at <= from) return true;
  }
  return false;
}

// The hindsight rate of one sample: bursts per second of its series over
// [t - 1 h, t] and (t + 10 min, t + 10 min + 1 h], clipped to the series.
// `burst_starts` are the times of the series' bursts, in order.
double HindsightRate(const std::vector<TimePoint>& burst_starts, TimePoint t, TimePoint first,
                     TimePoint last) {
  constexpr Duration kHour = core::Seconds(3600);
  const auto count = [&](TimePoint from, TimePoint to) {  // bursts in (from, to]
    return std::upper_bound(burst_starts.begin(), burst_starts.end(), to) -
           std::upper_bound(burst_starts.begin(), burst_starts.end(), from);
  };
  const TimePoint after = t + k10m;
  const Duration span = (t - std::max(t - kHour, first)) +
                        std::max(Duration{}, std::min(after + kHour, last) - after);
  const auto bursts = count(t - kHour, t) + count(after, after + kHour);
  return static_cast<double>(bursts) / std::max(core::ToSecondsDouble(span), 60.0);
}

IdleScore Hindsight(const std::vector<UtilizationSeries>& series, const std::vector<Truth>& truths,
                    double threshold) {
  struct Candidate {
    double rate;
    size_t k, i;
  };
  std::vector<Candidate> quiet;
  int64_t positives = 0;
  for (size_t k = 0; k < series.size(); ++k) {
    const std::vector<UtilizationPoint>& points = series[k].points;
    std::vector<TimePoint> burst_starts;
    for (size_t i = 0; i < points.size(); ++i) {
      const bool busy = points[i].utilization_pct >= threshold;
      if (busy && (i == 0 || points[i - 1].utilization_pct < threshold))
        burst_starts.push_back(points[i].at);
      positives += truths[k].stays_quiet_10m[i] == 1;
    }
    for (size_t i = 0; i < points.size(); ++i) {
      if (points[i].utilization_pct >= threshold) continue;
      quiet.push_back(
          {HindsightRate(burst_starts, points[i].at, points.front().at, points.back().at), k, i});
    }
  }
  std::sort(quiet.begin(), quiet.end(),
            [](const Candidate& a, const Candidate& b) { return a.rate < b.rate; });
  // The cut with the best precision at the target recall; cuts fall between
  // distinct rates only, so equal rates share one verdict.
  size_t cut = quiet.size();
  double best_precision = -1;
  int64_t tp = 0, fp = 0;
  for (size_t j = 0; j < quiet.size(); ++j) {
    const int stays = truths[quiet[j].k].stays_quiet_10m[quiet[j].i];
    tp += stays == 1;
    fp += stays == 0;
    if (j + 1 < quiet.size() && quiet[j + 1].rate == quiet[j].rate) continue;
    const double precision = Ratio(tp, tp + fp);
    if (Ratio(tp, positives) >= kHindsightRecall && precision > best_precision) {
      best_precision = precision;
      cut = j + 1;
    }
  }
  std::vector<std::vector<bool>> idle(series.size());
  for (size_t k = 0; k < series.size(); ++k) idle[k].assign(series[k].points.size(), false);
  for (size_t j = 0; j < cut; ++j) idle[quiet[j].k][quiet[j].i] = true;
  Tally tally;
  for (size_t k = 0; k < series.size(); ++k) {
    for (size_t i = 0; i < series[k].points.size(); ++i) Count(tally, truths[k], i, idle[k][i]);
  }
  return Score("hindsight_load_2h", tally);
}

}  // namespace

IdleEvalReport EvaluateIdle(const std::vector<UtilizationSeries>& series,
                            observe::IdleConfig config, const VerdictSink& sink) {
  IdleEvalReport report;
  for (const UtilizationSeries& s : series) report.samples += static_cast<int64_t>(s.points.size());
  report.series = static_cast<int64_t>(series.size());
  report.median_step = MedianStep(series);
  config.max_sample_gap = std::max(config.max_sample_gap, 3 * report.median_step);
  report.max_sample_gap = config.max_sample_gap;
  const double threshold = config.busy_utilization_pct;
  const Duration gap = config.max_sample_gap;

  std::vector<Truth> truths;
  for (const UtilizationSeries& s : series) {
    truths.push_back(s.points.empty() ? Truth{} : Judge(s, threshold, gap));
  }

  // gleaner: all series through one classifier, in time order.
  std::vector<std::tuple<TimePoint, size_t, size_t>> order;
  for (size_t k = 0; k < series.size(); ++k) {
    for (size_t i = 0; i < series[k].points.size(); ++i)
      order.emplace_back(series[k].points[i].at, k, i);
  }
  std::sort(order.begin(), order.end());
  observe::IdleClassifier classifier(config);
  Tally gleaner;
  for (const auto& [at, k, i] : order) {
    const UtilizationPoint& p = series[k].points[i];
    observe::GpuSample sample;
    sample.at = p.at;
    sample.uuid = core::GpuUuid(series[k].id);
    sample.utilization_pct = p.utilization_pct;
    sample.memory_used = p.memory_used;
    sample.processes_known = false;  // traces carry no process lists
    const observe::Verdict& v = classifier.Observe(sample);
    Count(gleaner, truths[k], i, v.state == observe::GpuState::kIdle);
    if (sink) sink(series[k], p, v.state);
  }
  report.classifiers.push_back(Score("gleaner", gleaner));

  const auto under = [threshold](double u) { return u < threshold; };
  const auto zero = [](double u) { return u == 0; };
  struct Baseline {
    const char* name;
    Duration window;
    bool exact_zero;
  };
  for (const Baseline& b : {Baseline{"instantaneous", Duration{}, false},
                            Baseline{"exact_zero_30s", core::Seconds(30), true},
                            Baseline{"fixed_window_5m", core::Seconds(300), false},
                            Baseline{"fixed_window_10m", core::Seconds(600), false}}) {
    Tally tally;
    for (size_t k = 0; k < series.size(); ++k) {
      for (size_t i = 0; i < series[k].points.size(); ++i) {
        const bool idle = b.exact_zero ? WindowRule(series[k], i, b.window, gap, zero)
                                       : WindowRule(series[k], i, b.window, gap, under);
        Count(tally, truths[k], i, idle);
      }
    }
    report.classifiers.push_back(Score(b.name, tally));
  }
  report.hindsight = Hindsight(series, truths, threshold);
  return report;
}

}  // namespace gleaner::sim
