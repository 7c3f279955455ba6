#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "agent/process_info.h"
#include "core/clock.h"
#include "gpu/gpu_backend.h"

namespace gleaner::daemon {

// Where GPU readings come from for a command: real NVML, or a scenario
// (`--fake`) with its declared process owners.
struct GpuSource {
  std::unique_ptr<gpu::GpuBackend> backend;
  std::unique_ptr<agent::ProcessInspector> scenario_inspector;  // set for scenarios
  const agent::ProcessInspector* inspector = nullptr;           // the one to use
};

// Whether `gleaner up` may run on the built-in simulated GPUs when NVML
// cannot be opened: only on a host with no sign of NVIDIA hardware (no
// NVML library, no /dev/nvidia*, no /proc/driver/nvidia under `dev` and
// `proc`), started by a person (no service manager's INVOCATION_ID or
// NOTIFY_SOCKET) with no config file. Otherwise a server whose driver broke (a library/kernel
// mismatch after an upgrade) would write simulated history into its real
// store and lend GPUs it does not have. nullopt: it may; else why not.
std::optional<std::string> WhyNotSimulate(const std::string& nvml_library, bool config_file,
                                          const std::string& dev = "/dev",
                                          const std::string& proc = "/proc");

// The kind of GPU source a data directory's history was written from
// ("nvml", or "fake" for simulated GPUs), kept in DATA_DIR/gpu-source: a
// daemon refuses to write another kind's readings there unless `accept`
// (--accept-gpu-source), so simulated and real history never mix.
core::Status CheckGpuSourceKind(const std::string& data_dir, const GpuSource& source, bool accept);

// A real driver's fatal Xids outlive this process: each is kept in
// DATA_DIR/gpu-faults.json until the host reboots or an operator forgets it
// (gpu/fault_memory.h); `log` hears what is remembered. Simulated GPUs start
// afresh every time.
void RememberGpuFaults(const std::string& data_dir, const core::Clock& clock,
                       std::function<void(const std::string&)> log, GpuSource* source);
std::string GpuFaultFile(const std::string& data_dir);

}  // namespace gleaner::daemon
