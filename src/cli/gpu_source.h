#pragma once

#include <iosfwd>
#include <memory>
#include <string>

#include "agent/process_info.h"
#include "core/clock.h"
#include "gpu/gpu_backend.h"

namespace gleaner::cli {

// Where GPU readings come from for a command: real NVML, or a scenario
// (`--fake`) with its declared process owners.
struct GpuSource {
  std::unique_ptr<gpu::GpuBackend> backend;
  std::unique_ptr<agent::ProcessInspector> scenario_inspector;  // set for scenarios
  const agent::ProcessInspector* inspector = nullptr;           // the one to use
};

// Opens the source; on failure prints why to `err` and returns the exit
// code (kExitNoDriver, kExitBadInput), else kExitOk. A scenario's GPUs get
// UUIDs of their own from `uuid_salt` when it is set (agents on one cluster
// simulating the same scenario must not share GPUs).
int OpenGpuSource(const std::string& fake, const std::string& nvml_library,
                  const core::Clock& clock, const agent::ProcessInspector& host_inspector,
                  std::ostream& err, GpuSource* source, const std::string& uuid_salt = "");

// The data directory: `flag` if set, else $GLEANER_DATA_DIR, else
// /var/lib/gleaner as root and ~/.local/share/gleaner otherwise.
std::string DataDir(const std::string& flag);

}  // namespace gleaner::cli
