#include "cost/gpu_speed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cost/cost_settings.h"

namespace gleaner::cost {
namespace {

using ::testing::HasSubstr;

TEST(GpuSpeedTest, DatasheetPeaksOverTheA100s) {
  EXPECT_DOUBLE_EQ(PublishedGpuSpeed("A100-80GB-SXM")->relative_to_a100, 1.0);
  EXPECT_DOUBLE_EQ(PublishedGpuSpeed("H100-80GB-SXM")->relative_to_a100, 989.0 / 312);
  EXPECT_DOUBLE_EQ(PublishedGpuSpeed("H100-80GB-PCIe")->relative_to_a100, 756.0 / 312);
  EXPECT_DOUBLE_EQ(PublishedGpuSpeed("T4")->relative_to_a100, 65.0 / 312);
  EXPECT_DOUBLE_EQ(PublishedGpuSpeed("V100M32")->relative_to_a100, 125.0 / 312);  // openb's name
  EXPECT_THAT(PublishedGpuSpeed("T4")->source, HasSubstr("NVIDIA T4 datasheet: 65 TFLOPS"));
}

TEST(GpuSpeedTest, NamesThatStartAlikeAreToldApart) {
  EXPECT_DOUBLE_EQ(PublishedGpuSpeed("L40S")->relative_to_a100, 362.0 / 312);
  EXPECT_DOUBLE_EQ(PublishedGpuSpeed("L4")->relative_to_a100, 121.0 / 312);
  EXPECT_FALSE(PublishedGpuSpeed("L40").has_value());
  EXPECT_DOUBLE_EQ(PublishedGpuSpeed("A10")->relative_to_a100, 125.0 / 312);
  EXPECT_FALSE(PublishedGpuSpeed("A10G").has_value());
  EXPECT_FALSE(PublishedGpuSpeed("RTX4090").has_value());
  EXPECT_FALSE(PublishedGpuSpeed("").has_value());
}

TEST(GpuSpeedTest, ASiteMeasurementWins) {
  CostSettings s;
  s.speeds["H100-80GB"] = 1.9;
  EXPECT_DOUBLE_EQ(s.SpeedOf("H100-80GB")->relative_to_a100, 1.9);
  EXPECT_EQ(s.SpeedOf("H100-80GB")->source, "gleaner.toml [cost.speed]");
  EXPECT_DOUBLE_EQ(s.SpeedOf("H100-80GB-SXM")->relative_to_a100, 989.0 / 312);
}

}  // namespace
}  // namespace gleaner::cost
