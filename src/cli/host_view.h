#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/process_info.h"
#include "core/units.h"
#include "gpu/gpu_backend.h"
#include "observe/verdict.h"

namespace gleaner::cli {

// A GPU process with who runs it, when the host can tell.
struct ProcessView {
  gpu::GpuProcess process;
  std::optional<agent::ProcessInfo> owner;
};

struct GpuView {
  gpu::GpuSnapshot snapshot;
  std::vector<ProcessView> processes;
  std::optional<observe::Verdict> verdict;
};

// Everything `gleaner gpus` shows: one pass over the backend, attributed
// and judged.
struct HostView {
  core::TimePoint taken_at;
  std::string hostname;
  gpu::DriverInfo driver;
  std::vector<GpuView> gpus;
  std::vector<gpu::GpuLink> topology;  // empty unless asked for
};

// Builds the view of one pass; `verdicts` are matched to GPUs by UUID.
HostView BuildHostView(core::TimePoint at, const gpu::DriverInfo& driver,
                       std::vector<gpu::GpuSnapshot> snapshots,
                       const agent::ProcessInspector& inspector,
                       const std::map<core::GpuUuid, observe::Verdict>& verdicts);

// Reads every GPU once and attributes its processes (no verdicts).
core::Result<HostView> ReadHost(gpu::GpuBackend& backend, const agent::ProcessInspector& inspector,
                                core::TimePoint now, bool with_topology);

}  // namespace gleaner::cli
