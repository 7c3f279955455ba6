#include "sim/forecast_eval.h"

#include <gtest/gtest.h>

namespace gleaner::sim {
namespace {

// Minute samples: busy at every minute in `busy`, quiet at the others.
UtilizationSeries Series(const std::string& id, int minutes, const std::vector<int>& busy) {
  UtilizationSeries s{id, {}};
  for (int m = 0; m < minutes; ++m) {
    const bool b = std::find(busy.begin(), busy.end(), m) != busy.end();
    s.points.push_back({core::FromUnixMicros(int64_t{m} * 60'000'000), b ? 80.0 : 0.0, {}});
  }
  return s;
}

const ForecastScore& Find(const ForecastEvalReport& r, const std::string& name) {
  for (const ForecastScore& f : r.forecasts) {
    if (f.name == name) return f;
  }
  std::abort();
}

TEST(ForecastEvalTest, SpellsOfOneLengthAreForecastExactlyOnceEightHaveEnded) {
  std::vector<int> busy;
  for (int m = 0; m <= 600; m += 20) busy.push_back(m);  // a burst every 20 minutes
  const ForecastEvalReport r = EvaluateForecast({Series("a", 601, busy)}, 10);
  EXPECT_EQ(r.series, 1);
  EXPECT_EQ(r.samples, 601);
  EXPECT_EQ(r.median_step, core::Seconds(60));
  // 30 spells of 19 quiet samples, each of which ended in the trace; the
  // first 8 teach, the other 22 are forecast.
  EXPECT_EQ(r.quiet_samples, 30 * 19);
  EXPECT_EQ(r.scored, 22 * 19);
  const ForecastScore& ours = Find(r, "gleaner");
  EXPECT_NEAR(ours.pinball_mean_min, 0, 1e-9);
  EXPECT_EQ(ours.covered_p80, 1.0);
  EXPECT_EQ(ours.covered_p20, 1.0);
  // Persistence says as long again as it has been quiet: wrong but at the
  // spell's middle.
  EXPECT_GT(Find(r, "persistence").pinball_mean_min, 1.0);
  EXPECT_GT(Find(r, "median_spell").pinball_mean_min, 1.0);
  ASSERT_EQ(r.forecasts.size(), 5u);
}

TEST(ForecastEvalTest, AGapEndsASpellWithoutAnOutcome) {
  std::vector<int> busy;
  for (int m = 0; m <= 200; m += 20) busy.push_back(m);
  UtilizationSeries s = Series("a", 201, busy);
  // Minutes 25..34 missing: the spell from 20 to 40 has no outcome before
  // the gap, and after it no known start.
  s.points.erase(s.points.begin() + 25, s.points.begin() + 35);
  const ForecastEvalReport r = EvaluateForecast({s}, 10);
  EXPECT_EQ(r.quiet_samples, 10 * 19 - 10 - 4);  // its 4 samples before the gap lost their outcome
  // The broken spell teaches nothing: the eighth whole one ends at minute
  // 180, so only the last spell's 19 samples are forecast.
  EXPECT_EQ(r.scored, 19);
}

}  // namespace
}  // namespace gleaner::sim
