#include "cost/onprem.h"

#include <gtest/gtest.h>

namespace gleaner::cost {
namespace {

// The worked examples of the price facts (docs/cost.md), per server-hour:
//   capex        = capex / (4 y x 8766 h)
//   maintenance  = capex x 10 %/y / 8766 h
//   power        = kW x 70 % load x PUE 1.58 x $0.10/kWh
TEST(OnPremTest, H100ServerCostsAbout1_49PerGpuHour) {
  const auto p = DefaultOnPremParams("H100-80GB-SXM");
  ASSERT_TRUE(p.has_value());
  const OnPremCost c = ComputeOnPremCost(*p);
  EXPECT_NEAR(c.capex_per_server_hour, 7.70, 0.005);        // 270000 / 35064
  EXPECT_NEAR(c.maintenance_per_server_hour, 3.08, 0.005);  // 27000 / 8766
  EXPECT_NEAR(c.power_per_server_hour, 1.128, 0.0005);      // 10.2 x 0.7 x 1.58 x 0.10
  EXPECT_NEAR(c.per_server_hour, 11.91, 0.005);             // 7.70 + 3.08 + 1.13
  EXPECT_NEAR(c.per_gpu_hour, 1.49, 0.005);                 // 11.91 / 8
  // At 50 % utilisation a useful GPU-hour costs twice as much: 2.98.
  EXPECT_NEAR(CostPerUsefulGpuHour(c, 0.5), 2.98, 0.005);
  // Filling an idle hour: (700 W - 75 W) / 1000 x 1.58 x $0.10 = $0.09875.
  EXPECT_NEAR(c.marginal_per_gpu_hour, 0.09875, 1e-9);
}

TEST(OnPremTest, A100ServerCostsAbout1_09PerGpuHour) {
  const auto p = DefaultOnPremParams("A100-80GB");
  ASSERT_TRUE(p.has_value());
  const OnPremCost c = ComputeOnPremCost(*p);
  // 200000 / 35064 = 5.704; 20000 / 8766 = 2.282; 6.5 x 0.7 x 1.58 x 0.10 = 0.719
  EXPECT_NEAR(c.per_server_hour, 8.70, 0.005);
  EXPECT_NEAR(c.per_gpu_hour, 1.09, 0.005);  // 8.704 / 8 = 1.088
  // (400 W - 50 W) / 1000 x 1.58 x $0.10 = $0.0553
  EXPECT_NEAR(c.marginal_per_gpu_hour, 0.0553, 1e-9);
}

TEST(OnPremTest, UnknownModelHasNoDefaults) {
  EXPECT_FALSE(DefaultOnPremParams("RTX4090").has_value());
}

TEST(OnPremTest, OwnParameters) {
  OnPremParams p;
  p.server_capex = 87660;  // 87660 / (1 y x 8766) = 10 per hour
  p.life_years = 1;
  p.maintenance_rate_per_year = 0;
  p.server_power_kw = 2;  // 2 x 0.5 x 1.0 x 1.0 = 1
  p.load_fraction = 0.5;
  p.pue = 1;
  p.electricity_per_kwh = 1;
  p.gpus_per_server = 4;
  p.gpu_busy_w = 300;
  p.gpu_idle_w = 100;
  const OnPremCost c = ComputeOnPremCost(p);
  EXPECT_DOUBLE_EQ(c.per_server_hour, 11);
  EXPECT_DOUBLE_EQ(c.per_gpu_hour, 2.75);
  EXPECT_DOUBLE_EQ(c.marginal_per_gpu_hour, 0.2);
}

}  // namespace
}  // namespace gleaner::cost
