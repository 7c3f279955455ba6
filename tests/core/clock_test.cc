#include "core/clock.h"

#include <gtest/gtest.h>

#include <chrono>

namespace gleaner::core {
namespace {

TEST(ManualClockTest, MovesOnlyWhenTold) {
  ManualClock clock(FromUnixMicros(1'000'000));
  EXPECT_EQ(ToUnixMicros(clock.Now()), 1'000'000);
  clock.Advance(Seconds(5));
  EXPECT_EQ(ToUnixMicros(clock.Now()), 6'000'000);
  clock.Advance(Milliseconds(250));
  EXPECT_EQ(ToUnixMicros(clock.Now()), 6'250'000);
  clock.Set(FromUnixMicros(42));
  EXPECT_EQ(ToUnixMicros(clock.Now()), 42);
}

TEST(RealClockTest, TracksSystemTime) {
  RealClock clock;
  const auto before = std::chrono::system_clock::now();
  const TimePoint now = clock.Now();
  const auto after = std::chrono::system_clock::now();
  EXPECT_GE(now, std::chrono::time_point_cast<Duration>(before));
  EXPECT_LE(now, std::chrono::time_point_cast<Duration>(after));
  // Sanity: after 2020-01-01, so the epoch and units are right.
  EXPECT_GT(ToUnixMicros(now), int64_t{1'577'836'800} * 1'000'000);
}

TEST(UnitsTest, SecondsDouble) {
  EXPECT_DOUBLE_EQ(ToSecondsDouble(Milliseconds(1500)), 1.5);
  EXPECT_DOUBLE_EQ(ToSecondsDouble(Duration(1)), 1e-6);
}

}  // namespace
}  // namespace gleaner::core
