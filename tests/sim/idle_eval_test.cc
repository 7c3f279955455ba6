#include "sim/idle_eval.h"

#include <gtest/gtest.h>

namespace gleaner::sim {
namespace {

// A series sampled every `step_s`, with utilization from `values`.
UtilizationSeries Series(const std::string& id, const std::vector<double>& values,
                         int step_s = 60) {
  UtilizationSeries s{id, {}};
  for (size_t i = 0; i < values.size(); ++i) {
    s.points.push_back({core::FromUnixMicros(static_cast<int64_t>(i) * step_s * 1'000'000),
                        values[i], std::nullopt});
  }
  return s;
}

const IdleScore& Find(const IdleEvalReport& r, const std::string& name) {
  for (const IdleScore& s : r.classifiers) {
    if (s.name == name) return s;
  }
  std::abort();
}

TEST(IdleEvalTest, InstantaneousBaselineScoredByHand) {
  // Minute samples: busy, then 60 minutes quiet, busy at minute 61, quiet.
  std::vector<double> v(80, 0.0);
  v[0] = 50;
  v[61] = 50;
  const IdleEvalReport r = EvaluateIdle({Series("a", v)}, {});
  EXPECT_EQ(r.series, 1);
  EXPECT_EQ(r.samples, 80);
  EXPECT_EQ(r.median_step, core::Seconds(60));
  EXPECT_EQ(r.max_sample_gap, core::Seconds(180));
  const IdleScore& inst = Find(r, "instantaneous");
  // Judged samples: minutes 0..69 (10 minutes before the end). A quiet
  // sample is truly idle for 10 minutes unless minute 61 comes within
  // them: minutes 51..60 are not. So of the 68 quiet judged samples, 58
  // are right. The busy samples 0 and 61 are also followed by 10 quiet
  // minutes: truly idle after, but not called idle (recall 58 of 60).
  EXPECT_NEAR(inst.precision_10m, 58.0 / 68.0, 1e-9);
  EXPECT_NEAR(inst.recall_10m, 58.0 / 60.0, 1e-9);
  EXPECT_NEAR(inst.idle_time_captured, 1.0, 1e-9);
}

TEST(IdleEvalTest, WindowBaselinesNeedTheWholeWindow) {
  std::vector<double> v(40, 0.0);
  v[0] = 50;
  const IdleEvalReport r = EvaluateIdle({Series("a", v)}, {});
  // Quiet from minute 1; a 5-minute window is covered from minute 5 on.
  EXPECT_EQ(Find(r, "fixed_window_5m").idle_verdicts, 35);
  EXPECT_EQ(Find(r, "fixed_window_10m").idle_verdicts, 30);
  EXPECT_EQ(Find(r, "exact_zero_30s").idle_verdicts, 39);
  EXPECT_EQ(Find(r, "instantaneous").idle_verdicts, 39);
  EXPECT_DOUBLE_EQ(Find(r, "fixed_window_5m").precision_10m, 1.0);
}

TEST(IdleEvalTest, ExactZeroBaselineRejectsLowPolling) {
  const IdleEvalReport r = EvaluateIdle({Series("a", std::vector<double>(60, 1.0))}, {});
  EXPECT_EQ(Find(r, "exact_zero_30s").idle_verdicts, 0);
  EXPECT_EQ(Find(r, "instantaneous").idle_verdicts, 60);
}

TEST(IdleEvalTest, GleanerNeverCallsABurstyGpuIdleOnceItKnowsIt) {
  // Bursts every 7 minutes for 20 hours: no pause ever lasts 10 minutes.
  std::vector<double> v;
  for (int i = 0; i < 1200; ++i) v.push_back(i % 7 == 0 ? 80 : 0);
  std::vector<UtilizationSeries> series{Series("bursty", v)};
  int late_idle = 0;
  const IdleEvalReport r = EvaluateIdle(
      series, {}, [&](const UtilizationSeries&, const UtilizationPoint& p, observe::GpuState s) {
        if (p.at > core::FromUnixMicros(int64_t{3600} * 1'000'000 * 5) &&
            s == observe::GpuState::kIdle) {
          ++late_idle;
        }
      });
  EXPECT_EQ(late_idle, 0);
  // The window rules never learn: they keep calling its 6-minute pauses idle.
  EXPECT_GT(Find(r, "fixed_window_5m").idle_verdicts, 100);
}

TEST(IdleEvalTest, GapsAreNotCoveredWindows) {
  UtilizationSeries s = Series("a", std::vector<double>(20, 0.0));
  for (size_t i = 10; i < 20; ++i) s.points[i].at += core::Seconds(3600);  // an hour-long hole
  const IdleEvalReport r = EvaluateIdle({s}, {});
  // The 5-minute window restarts after the hole: minutes 5..9 and 15..19.
  EXPECT_EQ(Find(r, "fixed_window_5m").idle_verdicts, 10);
}

TEST(IdleEvalTest, HindsightCallsTheCalmestSeriesIdleFirst) {
  // A flat series and one that bursts every 7 minutes (never 10 quiet).
  std::vector<double> bursty;
  for (int i = 0; i < 200; ++i) bursty.push_back(i % 7 == 0 ? 80 : 0);
  const IdleEvalReport r =
      EvaluateIdle({Series("flat", std::vector<double>(200, 0.0)), Series("bursty", bursty)}, {});
  // The flat series alone reaches full recall, precisely: its 200 samples.
  EXPECT_EQ(r.hindsight.name, "hindsight_load_2h");
  EXPECT_EQ(r.hindsight.idle_verdicts, 200);
  EXPECT_DOUBLE_EQ(r.hindsight.precision_10m, 1.0);
  EXPECT_DOUBLE_EQ(r.hindsight.recall_10m, 1.0);
  for (const IdleScore& s : r.classifiers) EXPECT_NE(s.name, r.hindsight.name);
}

TEST(IdleEvalTest, HindsightGoesAsFarAsTheTargetRecallNeeds) {
  // A short flat series holds under 75 % of the quiet-ahead samples; the
  // rest are in one that bursts every 30 minutes, so some of its samples,
  // right and wrong alike, must be called idle too.
  std::vector<double> sparse;
  for (int i = 0; i < 600; ++i) sparse.push_back(i % 30 == 0 ? 80 : 0);
  const IdleEvalReport r =
      EvaluateIdle({Series("flat", std::vector<double>(60, 0.0)), Series("sparse", sparse)}, {});
  EXPECT_GE(r.hindsight.recall_10m, kHindsightRecall);
  EXPECT_LT(r.hindsight.precision_10m, 1.0);
  EXPECT_GT(r.hindsight.idle_verdicts, 60);
}

}  // namespace
}  // namespace gleaner::sim
