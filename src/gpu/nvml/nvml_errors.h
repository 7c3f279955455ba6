#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "gpu/nvml/nvml_api.h"
#include "gpu/reading.h"

namespace gleaner::gpu::nvml {

// NVML's name for a return code ("GPU_IS_LOST"), stable across drivers.
std::string_view ReturnCodeName(nvmlReturn_t code);

// A Status for a failed call, saying what failed and what the user can do.
core::Status ToStatus(nvmlReturn_t code, std::string_view call);

// How a failed per-field call shows in a snapshot.
Unreadable ToUnreadable(nvmlReturn_t code);

}  // namespace gleaner::gpu::nvml
