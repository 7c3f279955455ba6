#include "gpu/nvml/nvml_errors.h"

#include <string>

namespace gleaner::gpu::nvml {

std::string_view ReturnCodeName(nvmlReturn_t code) {
  switch (code) {
    case NVML_SUCCESS:
      return "SUCCESS";
    case NVML_ERROR_UNINITIALIZED:
      return "UNINITIALIZED";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case NVML_ERROR_NOT_SUPPORTED:
      return "NOT_SUPPORTED";
    case NVML_ERROR_NO_PERMISSION:
      return "NO_PERMISSION";
    case NVML_ERROR_NOT_FOUND:
      return "NOT_FOUND";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "INSUFFICIENT_SIZE";
    case NVML_ERROR_INSUFFICIENT_POWER:
      return "INSUFFICIENT_POWER";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "DRIVER_NOT_LOADED";
    case NVML_ERROR_TIMEOUT:
      return "TIMEOUT";
    case NVML_ERROR_IRQ_ISSUE:
      return "IRQ_ISSUE";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "LIBRARY_NOT_FOUND";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "FUNCTION_NOT_FOUND";
    case NVML_ERROR_CORRUPTED_INFOROM:
      return "CORRUPTED_INFOROM";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU_IS_LOST";
    case NVML_ERROR_RESET_REQUIRED:
      return "RESET_REQUIRED";
    case NVML_ERROR_OPERATING_SYSTEM:
      return "OPERATING_SYSTEM";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "LIB_RM_VERSION_MISMATCH";
    case NVML_ERROR_MEMORY:
      return "MEMORY";
    case NVML_ERROR_NO_DATA:
      return "NO_DATA";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "ARGUMENT_VERSION_MISMATCH";
    case NVML_ERROR_GPU_NOT_FOUND:
      return "GPU_NOT_FOUND";
    case NVML_ERROR_UNKNOWN:
      return "UNKNOWN";
    default:
      return "UNRECOGNISED_ERROR";
  }
}

namespace {

// What to tell a person about each failure, beyond its name.
std::string_view Advice(nvmlReturn_t code) {
  switch (code) {
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "the NVIDIA kernel module is not loaded; check `lsmod | grep nvidia` and dmesg";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "the NVIDIA user-space library and kernel module differ (usually after a driver "
             "upgrade without a reboot); reboot the host";
    case NVML_ERROR_NO_PERMISSION:
      return "this user may not open the GPU device files; check /dev/nvidia* permissions";
    case NVML_ERROR_GPU_IS_LOST:
      return "the GPU fell off the bus; it needs a reset or a reboot (see dmesg for Xid 79)";
    case NVML_ERROR_RESET_REQUIRED:
      return "the GPU needs a reset (nvidia-smi -r) or a reboot";
    case NVML_ERROR_INSUFFICIENT_POWER:
      return "a GPU power cable is not properly attached";
    case NVML_ERROR_CORRUPTED_INFOROM:
      return "the GPU's infoROM is corrupted; contact the hardware vendor";
    case NVML_ERROR_IRQ_ISSUE:
      return "the kernel reported an interrupt problem with the GPU; see dmesg";
    case NVML_ERROR_OPERATING_SYSTEM:
      return "the operating system blocked the request (cgroup device rules?)";
    case NVML_ERROR_NOT_SUPPORTED:
      return "this GPU or driver does not support it";
    case NVML_ERROR_UNKNOWN:
      return "the driver reported an unknown error; `nvidia-smi` and dmesg say more";
    default:
      return {};
  }
}

core::StatusCode CodeFor(nvmlReturn_t code) {
  switch (code) {
    case NVML_ERROR_DRIVER_NOT_LOADED:
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
    case NVML_ERROR_LIBRARY_NOT_FOUND:
    case NVML_ERROR_UNINITIALIZED:
      return core::StatusCode::kUnavailable;
    case NVML_ERROR_NO_PERMISSION:
    case NVML_ERROR_OPERATING_SYSTEM:
      return core::StatusCode::kPermissionDenied;
    case NVML_ERROR_GPU_IS_LOST:
    case NVML_ERROR_RESET_REQUIRED:
    case NVML_ERROR_INSUFFICIENT_POWER:
    case NVML_ERROR_CORRUPTED_INFOROM:
    case NVML_ERROR_IRQ_ISSUE:
      return core::StatusCode::kDeviceLost;
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return core::StatusCode::kNotSupported;
    case NVML_ERROR_NOT_FOUND:
    case NVML_ERROR_GPU_NOT_FOUND:
      return core::StatusCode::kNotFound;
    case NVML_ERROR_INVALID_ARGUMENT:
      return core::StatusCode::kInvalidArgument;
    default:
      return core::StatusCode::kInternal;
  }
}

}  // namespace

core::Status ToStatus(nvmlReturn_t code, std::string_view call) {
  if (code == NVML_SUCCESS) return core::Status::Ok();
  std::string message(call);
  message += " failed: ";
  message += ReturnCodeName(code);
  if (std::string_view advice = Advice(code); !advice.empty()) {
    message += " (";
    message += advice;
    message += ")";
  }
  return {CodeFor(code), std::move(message)};
}

nvmlReturn_t ToNvmlReturn(ScenarioError error) {
  switch (error) {
    case ScenarioError::kNotSupported:
      return NVML_ERROR_NOT_SUPPORTED;
    case ScenarioError::kNoPermission:
      return NVML_ERROR_NO_PERMISSION;
    case ScenarioError::kGpuLost:
      return NVML_ERROR_GPU_IS_LOST;
    case ScenarioError::kDriverNotLoaded:
      return NVML_ERROR_DRIVER_NOT_LOADED;
    case ScenarioError::kLibRmVersionMismatch:
      return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
    case ScenarioError::kUnknown:
      return NVML_ERROR_UNKNOWN;
  }
  return NVML_ERROR_UNKNOWN;
}

Unreadable ToUnreadable(nvmlReturn_t code) {
  switch (code) {
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return Unreadable::kNotSupported;
    case NVML_ERROR_NO_PERMISSION:
      return Unreadable::kNoPermission;
    case NVML_ERROR_GPU_IS_LOST:
      return Unreadable::kGpuLost;
    default:
      return Unreadable::kError;
  }
}

}  // namespace gleaner::gpu::nvml
