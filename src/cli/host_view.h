#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/process_info.h"
#include "core/units.h"
#include "gpu/gpu_backend.h"

namespace gleaner::cli {

// A GPU process with who runs it, when the host can tell.
struct ProcessView {
  gpu::GpuProcess process;
  std::optional<agent::ProcessInfo> owner;
};

struct GpuView {
  gpu::GpuSnapshot snapshot;
  std::vector<ProcessView> processes;
};

// Everything `gleaner gpus` shows: one pass over the backend, attributed.
struct HostView {
  core::TimePoint taken_at;
  std::string hostname;
  gpu::DriverInfo driver;
  std::vector<GpuView> gpus;
  std::vector<gpu::GpuLink> topology;  // empty unless asked for
};

// Reads every GPU once and attributes its processes.
core::Result<HostView> ReadHost(gpu::GpuBackend& backend, const agent::ProcessInspector& inspector,
                                core::TimePoint now, bool with_topology);

}  // namespace gleaner::cli
