#include "cost/spot.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gleaner::cost {
namespace {

TEST(SpotTest, MtbfFromMonthlyBand) {
  // 10 %/month: hazard -ln(0.9) / 730 h = 1.4433e-4 /h, MTBF 6928.6 h.
  EXPECT_NEAR(MtbfHoursFromMonthlyFraction(0.10), 6928.59, 0.01);
}

TEST(SpotTest, YoungDaly) {
  // sqrt(2 x 0.1 h x 500 h) = sqrt(100) = 10 h.
  EXPECT_DOUBLE_EQ(YoungDalyIntervalHours(0.1, 500), 10);
  // 5 min checkpoints, MTBF 6928.6 h: sqrt(2 x 0.08333 x 6928.6) = 33.98 h.
  EXPECT_NEAR(YoungDalyIntervalHours(5.0 / 60, 6928.59), 33.98, 0.01);
}

TEST(SpotTest, ShortJobWritesNoCheckpointAndLosesHalfOnInterruption) {
  // 24 h on one A100 instance at 10 %/month, C = 5 min, restart = 10 min.
  // Optimal interval 33.98 h > 24 h, so no checkpoint: interval = 24 h.
  // Interruptions = 24 / 6928.6 = 0.0034639; each loses 24/2 + 1/6 h.
  // Wall = 24 + 0.0034639 x 12.1667 = 24.0421 h.
  const SpotEstimate e = EstimateSpot(24, 1, 0.10, 5.0 / 60, 10.0 / 60, std::nullopt);
  EXPECT_NEAR(e.optimal_interval_h, 33.98, 0.01);
  EXPECT_DOUBLE_EQ(e.interval_h, 24);
  EXPECT_DOUBLE_EQ(e.checkpoint_overhead_h, 0);
  EXPECT_NEAR(e.expected_interruptions, 0.0034639, 1e-6);
  EXPECT_NEAR(e.expected_wall_h, 24.0421, 1e-4);
}

TEST(SpotTest, GivenIntervalAndSeveralInstances) {
  // Two instances halve the MTBF: 6928.6 / 2 = 3464.3 h.
  const SpotEstimate two = EstimateSpot(24, 2, 0.10, 5.0 / 60, 10.0 / 60, std::nullopt);
  EXPECT_NEAR(two.job_mtbf_h, 3464.30, 0.01);
  // Interval 2 h: checkpoints 24 x (5/60) / 2 = 1 h; interruptions
  // (24 + 1) / 6928.6 = 0.0036082, each losing 1 h + 1/6 h.
  // Wall = 25 + 0.0036082 x 1.1667 = 25.0042 h.
  const SpotEstimate e = EstimateSpot(24, 1, 0.10, 5.0 / 60, 10.0 / 60, 2.0);
  EXPECT_DOUBLE_EQ(e.checkpoint_overhead_h, 1);
  EXPECT_NEAR(e.expected_interruptions, 0.0036082, 1e-6);
  EXPECT_NEAR(e.expected_wall_h, 25.0042, 1e-4);
}

TEST(SpotTest, BandsByFamily) {
  EXPECT_DOUBLE_EQ(DefaultSpotBand("A100-80GB").monthly_fraction, 0.10);
  EXPECT_DOUBLE_EQ(DefaultSpotBand("H100-80GB-SXM").monthly_fraction, 0.20);
  EXPECT_DOUBLE_EQ(DefaultSpotBand("L4").monthly_fraction, 0.05);
  EXPECT_DOUBLE_EQ(DefaultSpotBand("RTX4090").monthly_fraction, 0.30);
}

}  // namespace
}  // namespace gleaner::cost
