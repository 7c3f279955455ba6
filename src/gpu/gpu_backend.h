#pragma once

#include <vector>

#include "core/result.h"
#include "gpu/gpu_snapshot.h"

namespace gleaner::gpu {

// The source of GPU readings: real NVML, or a scenario-driven fake. One call
// to Snapshot() reads every GPU once; per-GPU and per-field failures live
// inside the snapshot, so a failed call means the whole source failed (the
// driver went away). Not thread-safe: one caller at a time.
class GpuBackend {
 public:
  virtual ~GpuBackend() = default;

  virtual const DriverInfo& Driver() const = 0;

  // Every GPU the driver enumerates, in index order, lost ones included.
  virtual core::Result<std::vector<GpuSnapshot>> Snapshot() = 0;

  // One entry per unordered pair of attached GPUs (a < b by index).
  virtual core::Result<std::vector<GpuLink>> Topology() = 0;
};

}  // namespace gleaner::gpu
