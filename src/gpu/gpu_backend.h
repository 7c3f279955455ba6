#pragma once

#include <vector>

#include "core/result.h"
#include "core/units.h"
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

  // What every GPU looked like `ago` before now, for a source that knows its
  // past: a scenario does; a driver does not (kNotSupported, the default).
  // It lets a daemon start with the history a verdict needs instead of
  // watching blind for minutes.
  virtual core::Result<std::vector<GpuSnapshot>> Recall(core::Duration /*ago*/) {
    return core::NotSupported("this GPU source keeps no history");
  }

  // One entry per unordered pair of attached GPUs (a < b by index).
  virtual core::Result<std::vector<GpuLink>> Topology() = 0;
};

}  // namespace gleaner::gpu
