// Parking through the real loader (gpu::CudaCheckpoint) and the fake
// libcuda.so.1, in step with the fake libnvidia-ml.so.1: a checkpointed
// holder leaves the GPU and comes back on restore; each failure the driver
// can give gets a reason in words, and leaves the holder running or parked,
// never lost.
#include "gpu/cuda/cuda_checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "gpu/nvml/nvml_backend.h"
#include "testing/fake_nvml.h"
#include "testing/temp_dir.h"

namespace gleaner::gpu {
namespace {

using ::testing::HasSubstr;

std::string FakeCuda(const std::string& variant) {
  return std::string(GLEANER_FAKE_CUDA_DIR) + "/" + variant + "/libcuda.so.1";
}

// alice's notebook holds 30 GB of an 80 GB GPU.
constexpr const char* kHeld = R"({"gpus": [
  {"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81920, "timeline": [
    {"at_s": 0, "memory_used_mib": 30500,
     "processes": [{"pid": 4242, "used_memory_mib": 30000, "sm_util_pct": 0}]}]}]})";

class CudaCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("GLEANER_FAKE_CUDA_PIDS", "4242", 1);
    setenv("GLEANER_FAKE_CUDA_STATE", (dir_.path() / "cuda-states").c_str(), 1);
    unsetenv("GLEANER_FAKE_CUDA_FAIL");
  }
  void TearDown() override {
    for (const char* v :
         {"GLEANER_FAKE_CUDA_PIDS", "GLEANER_FAKE_CUDA_STATE", "GLEANER_FAKE_CUDA_FAIL"}) {
      unsetenv(v);
    }
  }
  static void Fail(const char* what) { setenv("GLEANER_FAKE_CUDA_FAIL", what, 1); }

  testing::TempDir dir_;
};

TEST_F(CudaCheckpointTest, AParkedHolderLeavesTheGpuAndComesBackOnRestore) {
  testing::FakeNvml nvml("modern", kHeld);
  auto gpus = nvml.Open();
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  auto cuda = CudaCheckpoint::Open(FakeCuda("checkpoint"));
  ASSERT_TRUE(cuda.ok()) << cuda.status().ToString();
  EXPECT_EQ((*cuda)->driver_version(), 12080);
  EXPECT_EQ(*(*cuda)->State(4242), CudaProcessState::kRunning);

  ASSERT_TRUE((*cuda)->Park(4242, std::chrono::milliseconds(5000)).ok());
  EXPECT_EQ(*(*cuda)->State(4242), CudaProcessState::kCheckpointed);
  GpuSnapshot parked = (*gpus)->Snapshot()->at(0);
  EXPECT_TRUE(parked.processes.value().empty());
  EXPECT_EQ(parked.memory_used.value(), core::Bytes::MiB(500));  // the driver's own

  ASSERT_TRUE((*cuda)->Restore(4242).ok());
  EXPECT_EQ(*(*cuda)->State(4242), CudaProcessState::kRunning);
  GpuSnapshot back = (*gpus)->Snapshot()->at(0);
  ASSERT_EQ(back.processes.value().size(), 1u);
  EXPECT_EQ(back.memory_used.value(), core::Bytes::MiB(30500));
}

TEST_F(CudaCheckpointTest, ADriverWithoutTheApiOrWithoutADeviceSaysSo) {
  auto old = CudaCheckpoint::Open(FakeCuda("old"));
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), core::StatusCode::kNotSupported);
  EXPECT_THAT(old.status().message(), HasSubstr("CUDA 12.4 has no checkpoint API"));
  EXPECT_THAT(old.status().message(), HasSubstr("driver 570 or later"));

  auto none = CudaCheckpoint::Open((dir_.path() / "libcuda.so.1").string());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), core::StatusCode::kUnavailable);

  Fail("no_device");
  auto no_device = CudaCheckpoint::Open(FakeCuda("checkpoint"));
  ASSERT_FALSE(no_device.ok());
  EXPECT_THAT(no_device.status().message(), HasSubstr("cuInit: CUDA_ERROR_NO_DEVICE"));
}

TEST_F(CudaCheckpointTest, AHolderStillComputingIsLeftRunning) {
  auto cuda = CudaCheckpoint::Open(FakeCuda("checkpoint"));
  ASSERT_TRUE(cuda.ok());
  Fail("lock_timeout");
  const core::Status s = (*cuda)->Park(4242, std::chrono::milliseconds(3000));
  EXPECT_THAT(s.message(),
              HasSubstr("did not finish within 3000 ms: it is not idle; left running"));
  EXPECT_EQ(*(*cuda)->State(4242), CudaProcessState::kRunning);
}

TEST_F(CudaCheckpointTest, AFailedCheckpointIsUnlockedAndRunsOn) {
  auto cuda = CudaCheckpoint::Open(FakeCuda("checkpoint"));
  ASSERT_TRUE(cuda.ok());
  Fail("checkpoint");
  const core::Status s = (*cuda)->Park(4242, std::chrono::milliseconds(3000));
  EXPECT_THAT(s.message(), HasSubstr("cannot checkpoint process 4242: CUDA_ERROR_UNKNOWN"));
  EXPECT_THAT(s.message(), HasSubstr("unlocked, it runs on"));
  EXPECT_EQ(*(*cuda)->State(4242), CudaProcessState::kRunning);
}

TEST_F(CudaCheckpointTest, AFailedRestoreKeepsTheHolderParkedForARetry) {
  auto cuda = CudaCheckpoint::Open(FakeCuda("checkpoint"));
  ASSERT_TRUE(cuda.ok());
  ASSERT_TRUE((*cuda)->Park(4242, std::chrono::milliseconds(3000)).ok());
  Fail("restore");
  const core::Status failed = (*cuda)->Restore(4242);
  EXPECT_THAT(failed.message(), HasSubstr("stays parked, its memory kept"));
  EXPECT_EQ(*(*cuda)->State(4242), CudaProcessState::kCheckpointed);
  unsetenv("GLEANER_FAKE_CUDA_FAIL");
  EXPECT_TRUE((*cuda)->Restore(4242).ok());
  EXPECT_EQ(*(*cuda)->State(4242), CudaProcessState::kRunning);
}

TEST_F(CudaCheckpointTest, SomeoneElsesCheckpointOrAnUnknownPidIsRefused) {
  auto cuda = CudaCheckpoint::Open(FakeCuda("checkpoint"));
  ASSERT_TRUE(cuda.ok());
  ASSERT_TRUE((*cuda)->Park(4242, std::chrono::milliseconds(3000)).ok());
  // Parked by another tool (or by gleaner before a restart): not again.
  EXPECT_THAT((*cuda)->Park(4242, std::chrono::milliseconds(3000)).message(),
              HasSubstr("process 4242 is checkpointed already"));
  EXPECT_THAT((*cuda)->Park(777, std::chrono::milliseconds(3000)).message(),
              HasSubstr("cannot read the CUDA state of process 777: CUDA_ERROR_NOT_FOUND"));
  EXPECT_THAT((*cuda)->Restore(777).message(), HasSubstr("CUDA_ERROR_NOT_FOUND"));
  ASSERT_TRUE((*cuda)->Restore(4242).ok());
  EXPECT_THAT((*cuda)->Restore(4242).message(), HasSubstr("running, not parked"));
  Fail("not_permitted");
  EXPECT_THAT((*cuda)->Park(4242, std::chrono::milliseconds(3000)).message(),
              HasSubstr("persistence mode on (nvidia-smi -pm 1)"));
}

}  // namespace
}  // namespace gleaner::gpu
