#include "gpu/nvml/nvml_errors.h"

#include <gtest/gtest.h>

namespace gleaner::gpu::nvml {
namespace {

TEST(NvmlErrorsTest, StatusNamesTheCallTheCodeAndTheRemedy) {
  core::Status s = ToStatus(NVML_ERROR_GPU_IS_LOST, "nvmlDeviceGetMemoryInfo");
  EXPECT_EQ(s.code(), core::StatusCode::kDeviceLost);
  EXPECT_EQ(s.message(),
            "nvmlDeviceGetMemoryInfo failed: GPU_IS_LOST (the GPU fell off the bus; it needs a "
            "reset or a reboot (see dmesg for Xid 79))");
  EXPECT_TRUE(ToStatus(NVML_SUCCESS, "x").ok());
  EXPECT_EQ(ToStatus(NVML_ERROR_NO_PERMISSION, "x").code(), core::StatusCode::kPermissionDenied);
  EXPECT_EQ(ToStatus(NVML_ERROR_DRIVER_NOT_LOADED, "x").code(), core::StatusCode::kUnavailable);
  EXPECT_EQ(ToStatus(NVML_ERROR_NOT_SUPPORTED, "x").code(), core::StatusCode::kNotSupported);
  EXPECT_EQ(ToStatus(12345, "x").message(), "x failed: UNRECOGNISED_ERROR");
}

TEST(NvmlErrorsTest, EveryDocumentedCodeHasAName) {
  for (nvmlReturn_t code :
       {1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 20, 21, 25, 28, 999}) {
    EXPECT_NE(ReturnCodeName(code), "UNRECOGNISED_ERROR") << code;
  }
}

TEST(NvmlErrorsTest, FieldReasons) {
  EXPECT_EQ(ToUnreadable(NVML_ERROR_NOT_SUPPORTED), Unreadable::kNotSupported);
  EXPECT_EQ(ToUnreadable(NVML_ERROR_FUNCTION_NOT_FOUND), Unreadable::kNotSupported);
  EXPECT_EQ(ToUnreadable(NVML_ERROR_NO_PERMISSION), Unreadable::kNoPermission);
  EXPECT_EQ(ToUnreadable(NVML_ERROR_GPU_IS_LOST), Unreadable::kGpuLost);
  EXPECT_EQ(ToUnreadable(NVML_ERROR_UNKNOWN), Unreadable::kError);
}

}  // namespace
}  // namespace gleaner::gpu::nvml
