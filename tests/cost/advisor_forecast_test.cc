// In-house timing from an hour-of-week idle forecast. Every expected number
// is worked out by hand in the comments: the walk goes from now one hour of
// the week at a time, and in hour h does min(count, idle[h]) / count hours
// of work per wall hour.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cost/advisor.h"
#include "cost/civil_date.h"

namespace gleaner::cost {
namespace {

// One on-demand and one spot row. For 8 GPUs over 24 h: on-demand 20 x 24 =
// 480 USD; spot 8 USD/h x 24.0421 wall h (spot_test) = 192.34 USD, meeting a
// 48 h deadline. In-house: 8 x 24 = 192 GPU-h x 0.0553 USD marginal = 10.62
// USD, always the cheapest, so its timing alone decides the recommendation.
constexpr const char* kCatalog =
    "provider,region,instance,gpu_model,gpu_count,pricing_model,price_per_instance_hour,currency,"
    "source,date\n"
    "P,r1,od8,A100-80GB-SXM,8,on-demand,20,USD,s1,2026-01-01\n"
    "P,r1,sp8,A100-80GB-SXM,8,spot,8,USD,s2,2026-01-01\n";

Catalog TwoRows() {
  auto c = Catalog::Parse(kCatalog, "two.csv");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return *c;
}

IdleForecast Constant(double idle_gpus) {
  IdleForecast f;
  f.idle_gpus.fill(idle_gpus);
  f.basis = "test profile";
  return f;
}

// 8 GPUs idle from 00:00 to 08:00 every day, none otherwise.
IdleForecast NightsOnly() {
  IdleForecast f;
  for (size_t h = 0; h < kHoursPerWeek; ++h) f.idle_gpus[h] = h % 24 < 8 ? 8 : 0;
  f.basis = "nights";
  return f;
}

AdviceRequest EightA100s(double hours, IdleForecast forecast) {
  AdviceRequest r;
  r.gpu_model = "A100-80GB";
  r.gpu_count = 8;
  r.hours = hours;
  r.deadline_h = 48;
  r.today_days = *ParseIsoDate("2026-06-01");
  r.idle_forecast = std::move(forecast);
  return r;
}

const AdviceOption& InHouse(const Advice& a) {
  for (const AdviceOption& o : a.options) {
    if (o.kind == "in-house") return o;
  }
  ADD_FAILURE() << "no in-house option";
  static const AdviceOption kMissing;
  return kMissing;
}

std::string RecommendedKind(const Advice& a) {
  return a.recommended ? a.options[*a.recommended].kind : "(none)";
}

bool AnyContains(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(AdvisorForecastTest, AlwaysIdleRunsAtFullSpeed) {
  // 8 idle of 8 needed every hour: 1 h of work per wall hour, from the top
  // of hour 0: 24 h of work take 24 wall hours <= 48 h.
  auto a = Advise(TwoRows(), EightA100s(24, Constant(8)));
  ASSERT_TRUE(a.ok()) << a.status().message();
  const AdviceOption& home = InHouse(*a);
  EXPECT_NEAR(home.expected_hours, 24, 1e-12);
  EXPECT_EQ(home.meets_deadline, DeadlineVerdict::kYes);
  EXPECT_TRUE(home.eligible);
  EXPECT_NEAR(home.expected_cost, 10.6176, 1e-9);  // cost unchanged by the timing
  EXPECT_EQ(RecommendedKind(*a), "in-house");
  EXPECT_TRUE(AnyContains(home.arithmetic,
                          "idle forecast: 8.00 idle GPUs on average over the week; now is hour "
                          "0.00 of the week (Mon 00:00 UTC)"));
  EXPECT_TRUE(AnyContains(home.arithmetic,
                          "wait: 24.00 wall hours by the idle forecast (test profile), each wall "
                          "hour doing min(8, idle GPUs) / 8 h of work until 24.00 h are done: "
                          "ends Tue 00:00 UTC"));
}

TEST(AdvisorForecastTest, IdleOnlyAtNightTakesThreeNights) {
  // From Monday 00:00, 8 h of work each night (00:00-08:00): Monday night
  // done at wall 8 (8 h), Tuesday at 24 + 8 = 32 (16 h), Wednesday at 48 + 8
  // = 56 (24 h). 56 h > the 48 h deadline: no, and spot is recommended.
  AdviceRequest r = EightA100s(24, NightsOnly());
  auto a = Advise(TwoRows(), r);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_NEAR(InHouse(*a).expected_hours, 56, 1e-12);
  EXPECT_EQ(InHouse(*a).meets_deadline, DeadlineVerdict::kNo);
  EXPECT_EQ(RecommendedKind(*a), "spot");
  // Mean idle over the week: 8 GPUs x 8 of 24 hours = 2.67.
  EXPECT_TRUE(AnyContains(InHouse(*a).arithmetic, "2.67 idle GPUs on average over the week"));
  EXPECT_TRUE(
      AnyContains(InHouse(*a).arithmetic, "wait: 56.00 wall hours by the idle forecast (nights)"));

  // With 56 h allowed the forecast meets the deadline, and in-house (10.62
  // USD) is cheaper than spot (192.34 USD): the recommendation switches.
  r.deadline_h = 56;
  a = Advise(TwoRows(), r);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(InHouse(*a).meets_deadline, DeadlineVerdict::kYes);
  EXPECT_EQ(RecommendedKind(*a), "in-house");
}

TEST(AdvisorForecastTest, FirstStepIsOnlyTheRestOfTheCurrentHour) {
  // Now = 00:30, 8 idle always: 0.5 wall h gives 0.5 h of work to 01:00, then
  // 0.5 h more at full speed: 1 h of work in 1 wall hour.
  IdleForecast f = Constant(8);
  f.now_hour_of_week = 0.5;
  auto a = Advise(TwoRows(), EightA100s(1, f));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_NEAR(InHouse(*a).expected_hours, 1, 1e-12);
  EXPECT_TRUE(AnyContains(InHouse(*a).arithmetic, "now is hour 0.50 of the week (Mon 00:30 UTC)"));

  // Now = Monday 07:30, idle only at night: 0.5 h of work by 08:00 (wall
  // 0.5), nothing until Tuesday 00:00 (hour 24, wall 16.5), then the other
  // 0.5 h: done at hour 24.5 = wall 24.5 - 7.5 = 17.
  f = NightsOnly();
  f.now_hour_of_week = 7.5;
  a = Advise(TwoRows(), EightA100s(1, f));
  ASSERT_TRUE(a.ok());
  EXPECT_NEAR(InHouse(*a).expected_hours, 17, 1e-12);
  EXPECT_TRUE(AnyContains(InHouse(*a).arithmetic, "(Mon 07:30 UTC)"));
  EXPECT_TRUE(AnyContains(InHouse(*a).arithmetic, "ends Tue 00:30 UTC"));
}

TEST(AdvisorForecastTest, FewerIdleGpusThanNeededSlowTheJobInProportion) {
  // 4 idle of 8 needed: 4 / 8 = 0.5 h of work per wall hour; 10 h of work
  // take 10 / 0.5 = 20 wall hours.
  auto a = Advise(TwoRows(), EightA100s(10, Constant(4)));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_NEAR(InHouse(*a).expected_hours, 20, 1e-12);
  // Fractional idle GPUs: 2.5 of 8 = 0.3125 h per wall hour; 5 h take 16.
  a = Advise(TwoRows(), EightA100s(5, Constant(2.5)));
  ASSERT_TRUE(a.ok());
  EXPECT_NEAR(InHouse(*a).expected_hours, 16, 1e-12);
  // More idle than needed does not speed the job up: min(8, 16) / 8 = 1;
  // 10 h of work take 10 wall hours.
  a = Advise(TwoRows(), EightA100s(10, Constant(16)));
  ASSERT_TRUE(a.ok());
  EXPECT_NEAR(InHouse(*a).expected_hours, 10, 1e-12);
}

TEST(AdvisorForecastTest, TheWeekWrapsFromHour167ToHour0) {
  // Idle only in hour 0 (Monday 00:00-01:00). Now = Sunday 23:30 (hour
  // 167.5): 0.5 wall h of nothing, then hour 0 of the next week does 1 h of
  // work: done at wall 1.5.
  IdleForecast f;
  f.idle_gpus[0] = 8;
  f.now_hour_of_week = 167.5;
  auto a = Advise(TwoRows(), EightA100s(1, f));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_NEAR(InHouse(*a).expected_hours, 1.5, 1e-12);
  EXPECT_TRUE(AnyContains(InHouse(*a).arithmetic, "(Sun 23:30 UTC)"));
  EXPECT_TRUE(AnyContains(InHouse(*a).arithmetic, "ends Mon 01:00 UTC"));
  // From hour 0, 3 h of work need hour 0 of three weeks: done at the end of
  // the third one's, wall 2 x 168 + 1 = 337.
  f.now_hour_of_week = 0;
  AdviceRequest r = EightA100s(3, f);
  r.deadline_h.reset();
  a = Advise(TwoRows(), r);
  ASSERT_TRUE(a.ok());
  EXPECT_NEAR(InHouse(*a).expected_hours, 337, 1e-12);
  EXPECT_EQ(InHouse(*a).meets_deadline, DeadlineVerdict::kYes);  // no deadline
}

TEST(AdvisorForecastTest, NoIdleGpusNeverFinishesAndIsNotRecommended) {
  // All zeros: no work is ever done. The walk stops at the 8-week horizon
  // (1344 h) instead of dividing by zero: no, not eligible.
  auto a = Advise(TwoRows(), EightA100s(24, Constant(0)));
  ASSERT_TRUE(a.ok()) << a.status().message();
  const AdviceOption& home = InHouse(*a);
  EXPECT_NEAR(home.expected_hours, kIdleForecastHorizonH, 1e-12);
  EXPECT_EQ(kIdleForecastHorizonH, 1344.0);
  EXPECT_EQ(home.meets_deadline, DeadlineVerdict::kNo);
  EXPECT_FALSE(home.eligible);
  EXPECT_EQ(RecommendedKind(*a), "spot");
  EXPECT_TRUE(AnyContains(home.arithmetic, "0.00 idle GPUs on average over the week"));
  EXPECT_TRUE(AnyContains(home.arithmetic,
                          "wait: over 1344 wall hours by the idle forecast (test profile): only "
                          "0.00 of 24.00 h of work done by then"));
  EXPECT_TRUE(AnyContains(home.notes, "does not finish the job within 8 weeks"));

  // Without a deadline it is still "no": the forecast says it never ends.
  AdviceRequest r = EightA100s(24, Constant(0));
  r.deadline_h.reset();
  a = Advise(TwoRows(), r);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(InHouse(*a).meets_deadline, DeadlineVerdict::kNo);
  EXPECT_EQ(RecommendedKind(*a), "spot");
}

TEST(AdvisorForecastTest, TheHorizonIsInclusive) {
  // 1 idle of 8: 1/8 h of work per wall hour. 168 h of work take exactly
  // 168 x 8 = 1344 wall hours: done at the horizon, which counts.
  AdviceRequest r = EightA100s(168, Constant(1));
  r.deadline_h.reset();
  auto a = Advise(TwoRows(), r);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_NEAR(InHouse(*a).expected_hours, 1344, 1e-12);
  EXPECT_EQ(InHouse(*a).meets_deadline, DeadlineVerdict::kYes);
  EXPECT_TRUE(InHouse(*a).eligible);
  // 1 h more of work is not done by then: 1344 / 8 = 168 of 169 h.
  r.hours = 169;
  a = Advise(TwoRows(), r);
  ASSERT_TRUE(a.ok());
  EXPECT_NEAR(InHouse(*a).expected_hours, 1344, 1e-12);
  EXPECT_EQ(InHouse(*a).meets_deadline, DeadlineVerdict::kNo);
  EXPECT_FALSE(InHouse(*a).eligible);
  EXPECT_TRUE(AnyContains(InHouse(*a).arithmetic, "only 168.00 of 169.00 h of work done"));
}

TEST(AdvisorForecastTest, TheForecastTakesPrecedenceOverIdleHoursPerDay) {
  // 96 idle GPU-h per day alone would give 192 / 96 x 24 = 48 h (yes); the
  // night forecast gives 56 h (no).
  AdviceRequest r = EightA100s(24, NightsOnly());
  r.idle_gpu_hours_per_day = 96;
  auto a = Advise(TwoRows(), r);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_NEAR(InHouse(*a).expected_hours, 56, 1e-12);
  EXPECT_EQ(InHouse(*a).meets_deadline, DeadlineVerdict::kNo);
}

TEST(AdvisorForecastTest, BadForecastsAreRejectedNamingTheField) {
  auto expect_rejected = [](const IdleForecast& f, const std::string& field) {
    auto a = Advise(TwoRows(), EightA100s(24, f));
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.status().code(), core::StatusCode::kInvalidArgument);
    EXPECT_EQ(a.status().message().rfind(field, 0), 0u) << a.status().message();
  };
  IdleForecast f = Constant(8);
  f.idle_gpus[5] = -1;
  expect_rejected(f, "idle_forecast.idle_gpus[5]: expected a finite number at least 0");
  f.idle_gpus[5] = std::numeric_limits<double>::quiet_NaN();
  expect_rejected(f, "idle_forecast.idle_gpus[5]");
  f = Constant(8);
  f.idle_gpus[167] = std::numeric_limits<double>::infinity();
  expect_rejected(f, "idle_forecast.idle_gpus[167]");
  f = Constant(8);
  f.now_hour_of_week = 168;
  expect_rejected(f, "idle_forecast.now_hour_of_week: expected from 0 to below 168");
  f.now_hour_of_week = -0.25;
  expect_rejected(f, "idle_forecast.now_hour_of_week");
  f.now_hour_of_week = std::numeric_limits<double>::quiet_NaN();
  expect_rejected(f, "idle_forecast.now_hour_of_week");
}

}  // namespace
}  // namespace gleaner::cost
