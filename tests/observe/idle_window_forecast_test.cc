#include "observe/idle_window_forecast.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "observe/idle_classifier.h"

namespace gleaner::observe {
namespace {

const core::GpuUuid kA("GPU-a"), kB("GPU-b");

core::Duration Min(int64_t m) { return core::Seconds(60 * m); }

TEST(IdleWindowForecastTest, WhatRemainsOfSpellsAtLeastThisLong) {
  IdleWindowForecast f;
  EXPECT_FALSE(f.Predict(kA, {}).has_value());                    // nothing seen yet
  for (int64_t m = 1; m <= 10; ++m) f.AddSpell(kA, Min(10 * m));  // 10, 20, ..., 100 minutes
  auto now = f.Predict(kA, {});
  ASSERT_TRUE(now.has_value());
  EXPECT_TRUE(now->own);
  EXPECT_EQ(now->spells, 10);
  EXPECT_EQ(now->p80, Min(30));  // 8 of the 10 lasted 30 minutes or more
  EXPECT_EQ(now->p50, Min(60));
  EXPECT_EQ(now->p20, Min(90));
  // Quiet for 25 minutes: of the 8 spells that long, what remained.
  auto later = f.Predict(kA, Min(25));
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(later->spells, 8);
  EXPECT_EQ(later->p80, Min(40) - Min(25));  // 7 of the 8 lasted 40 minutes
  EXPECT_EQ(later->p50, Min(70) - Min(25));  // 4 of the 8 lasted 70
  EXPECT_EQ(later->p20, Min(90) - Min(25));  // 2 of the 8 lasted 90
  // Longer than all but seven: too few of its own, and none elsewhere.
  EXPECT_FALSE(f.Predict(kA, Min(35)).has_value());
}

TEST(IdleWindowForecastTest, AGpuWithFewSpellsOfItsOwnUsesAllTheHostsGpus) {
  IdleWindowForecast f;
  for (int i = 0; i < 20; ++i) f.AddSpell(kA, Min(60));
  f.AddSpell(kB, Min(5));
  auto b = f.Predict(kB, Min(2));
  ASSERT_TRUE(b.has_value());
  EXPECT_FALSE(b->own);
  EXPECT_EQ(b->spells, 21);
  EXPECT_EQ(b->p50, Min(58));  // all the host's spells: A's hour-long ones
}

TEST(IdleWindowForecastTest, OnlyTheNewestSpellsAreKept) {
  IdleWindowForecast f;
  for (size_t i = 0; i < IdleWindowForecast::kGpuSpells; ++i) f.AddSpell(kA, Min(600));
  for (size_t i = 0; i < IdleWindowForecast::kGpuSpells; ++i) f.AddSpell(kA, Min(5));
  auto a = f.Predict(kA, {});
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->own);
  EXPECT_EQ(a->p20, Min(5));  // the long ones of old are gone from its own
}

TEST(IdleWindowForecastTest, SpellsInStoredMinutesLieBetweenBusyMinutes) {
  const core::TimePoint t0 = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);
  std::vector<MinuteRollup> minutes;
  const auto add = [&](int minute, double peak, std::set<uint32_t> pids = {}) {
    MinuteRollup m;
    m.minute = t0 + Min(minute);
    m.samples = 60;
    m.observed = Min(1);
    m.utilization_max_pct = peak;
    m.pids = std::move(pids);
    minutes.push_back(m);
  };
  add(0, 90);
  for (int i = 1; i <= 5; ++i) add(i, 3);
  add(6, 50);  // 5 quiet minutes
  add(7, 0);
  add(8, 0, {42});  // a new process: activity
  add(9, 0, {42});
  add(11, 80);  // after a missing minute: no spell
  add(12, 0);
  add(13, 95);
  EXPECT_EQ(QuietSpellsIn(minutes, 10), (std::vector<core::Duration>{Min(5), Min(1), Min(1)}));
}

TEST(IdleWindowForecastTest, TheClassifierLearnsSpellsAndForecastsIdleGpus) {
  IdleClassifier c({});
  core::TimePoint t = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);
  GpuSample s;
  s.uuid = kA;
  s.processes_known = true;
  const auto step = [&](double util) {
    t += core::Seconds(1);
    s.at = t;
    s.utilization_pct = util;
    return c.Observe(s);
  };
  step(0);  // the first spell begins at the start of data: not whole, not learned
  for (int i = 0; i < 600; ++i) step(0);
  step(90);
  EXPECT_FALSE(c.ForecastQuiet(kA).has_value());
  for (int spell = 0; spell < IdleWindowForecast::kMinSpells; ++spell) {
    for (int i = 0; i < 1200; ++i) step(0);
    step(90);
  }
  EXPECT_FALSE(c.ForecastQuiet(kA).has_value());  // busy now
  Verdict v;
  for (int i = 0; i < 400; ++i) v = step(0);
  ASSERT_EQ(v.state, GpuState::kIdle) << v.evidence.reason;
  const std::optional<QuietForecast> f = c.ForecastQuiet(kA);
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->own);
  EXPECT_EQ(f->spells, IdleWindowForecast::kMinSpells);
  EXPECT_EQ(f->p50, core::Seconds(1201 - 400));
}

}  // namespace
}  // namespace gleaner::observe
