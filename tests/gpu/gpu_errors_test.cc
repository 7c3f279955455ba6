#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpu/gpu_snapshot.h"

namespace gleaner::gpu {
namespace {

using ::testing::HasSubstr;

GpuSnapshot Healthy() {
  GpuSnapshot s;
  s.uuid = core::GpuUuid("GPU-1");
  return s;
}

TEST(JudgeErrorsTest, WarningsAndUnreadableCountersLeaveAGpuHealthy) {
  GpuSnapshot s = Healthy();
  s.errors.ecc_corrected_volatile = Reading<uint64_t>::Of(900);
  s.errors.pcie_replays = Reading<uint32_t>::Of(40);
  s.errors.clock_event_reasons = Reading<uint64_t>::Of(kHardwareSlowdownReasons);
  s.errors.remapped_rows_corrected = Reading<uint32_t>::Of(2);
  s.errors.last_xid = Reading<uint32_t>::Of(31);  // the application's page fault
  s.errors.ecc_uncorrected_volatile = Reading<uint64_t>::Fail(Unreadable::kError, "UNKNOWN");
  JudgeErrors(s);
  EXPECT_EQ(s.health, GpuHealth::kOk);
  EXPECT_EQ(s.health_detail, "");
}

TEST(JudgeErrorsTest, EveryFaultIsNamedWithWhatToDo) {
  GpuSnapshot s = Healthy();
  s.errors.ecc_uncorrected_volatile = Reading<uint64_t>::Of(1);
  s.errors.remap_failed = Reading<bool>::Of(true);
  s.errors.remap_pending = Reading<bool>::Of(true);  // the failure says more
  s.errors.retirement_pending = Reading<bool>::Of(true);
  s.errors.fatal_xid = Reading<uint32_t>::Of(79);
  s.errors.last_xid = Reading<uint32_t>::Of(13);  // after the 79
  JudgeErrors(s);
  EXPECT_EQ(s.health, GpuHealth::kFaulty);
  EXPECT_EQ(GpuHealthName(s.health), "faulty");
  EXPECT_THAT(s.health_detail, HasSubstr("1 uncorrected ECC error(s) since the driver loaded: "
                                         "drain it and reset the GPU (nvidia-smi -r)"));
  EXPECT_THAT(s.health_detail, HasSubstr("; a memory row remap failed: the GPU needs replacing"));
  EXPECT_THAT(s.health_detail, ::testing::Not(HasSubstr("remap is pending")));
  EXPECT_THAT(s.health_detail, HasSubstr("page retirement is pending"));
  EXPECT_THAT(s.health_detail, HasSubstr("the driver reported Xid 79"));
}

TEST(JudgeErrorsTest, AGpuAlreadyUnhealthyKeepsItsReason) {
  GpuSnapshot s = Healthy();
  s.health = GpuHealth::kLost;
  s.health_detail = "GPU_IS_LOST";
  s.errors.last_xid = Reading<uint32_t>::Of(79);
  JudgeErrors(s);
  EXPECT_EQ(s.health, GpuHealth::kLost);
  EXPECT_EQ(s.health_detail, "GPU_IS_LOST");
}

TEST(JudgeErrorsTest, ApplicationXidsAreTheDevicePluginsList) {
  for (uint32_t xid : {13u, 31u, 43u, 45u, 68u}) EXPECT_TRUE(IsApplicationXid(xid)) << xid;
  for (uint32_t xid : {0u, 48u, 63u, 64u, 74u, 79u, 92u, 94u, 95u, 999u}) {
    EXPECT_FALSE(IsApplicationXid(xid)) << xid;
  }
}

}  // namespace
}  // namespace gleaner::gpu
