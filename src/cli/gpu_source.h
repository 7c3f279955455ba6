#pragma once

#include <iosfwd>
#include <string>

#include "agent/process_info.h"
#include "core/clock.h"
#include "daemon/gpu_source.h"

namespace gleaner::cli {

using daemon::GpuSource;

// Opens the source; on failure prints why to `err` and returns the exit
// code (kExitNoDriver, kExitBadInput), else kExitOk. A scenario's GPUs get
// UUIDs of their own from `uuid_salt` when it is set (agents on one cluster
// simulating the same scenario must not share GPUs).
int OpenGpuSource(const std::string& fake, const std::string& nvml_library,
                  const core::Clock& clock, const agent::ProcessInspector& host_inspector,
                  std::ostream& err, GpuSource* source, const std::string& uuid_salt = "");

}  // namespace gleaner::cli
