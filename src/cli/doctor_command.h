#pragma once

#include <iosfwd>
#include <string>

#include "daemon/host_checks.h"

namespace CLI {
class App;
}

namespace gleaner::cli {

struct DoctorOptions {
  daemon::HostCheckSetup setup;
  bool json = false;
};

// gleaner doctor: checks what a first install needs (the driver and its
// NVML entry points, the GPUs' health, cgroup v2 for jobs, the data
// directory, the config, the API's port, the store, TLS files, the clock
// against a coordinator) and says
// how to fix each problem. Exit 0 when nothing failed, 1 otherwise.
CLI::App* AddDoctorCommand(CLI::App& app, DoctorOptions& options);
int RunDoctor(const DoctorOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gleaner::cli
