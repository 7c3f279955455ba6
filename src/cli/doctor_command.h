#pragma once

#include <iosfwd>
#include <string>

#include "net/tls.h"

namespace CLI {
class App;
}

namespace gleaner::cli {

struct DoctorOptions {
  std::string data_dir;
  std::string config;
  std::string fake;
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string listen = "127.0.0.1:7380";
  std::string store;
  std::string store_file;
  net::TlsFiles tls;
  // A coordinator to compare clocks with (the global --server), and how to
  // reach it over https.
  std::string server;
  net::TlsFiles server_tls;
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
