#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "gpu/nvml/nvml_api.h"
#include "gpu/reading.h"
#include "gpu/scenario.h"

namespace gleaner::gpu::nvml {

// NVML's name for a return code ("GPU_IS_LOST"), stable across drivers.
std::string_view ReturnCodeName(nvmlReturn_t code);

// A Status for a failed call, saying what failed and what the user can do.
core::Status ToStatus(nvmlReturn_t code, std::string_view call);

// How a failed per-field call shows in a snapshot.
Unreadable ToUnreadable(nvmlReturn_t code);

// What NVML returns for an error a scenario injects. The fake driver and the
// in-process fake both go through this, so they cannot disagree.
nvmlReturn_t ToNvmlReturn(ScenarioError error);

}  // namespace gleaner::gpu::nvml
