#pragma once

// What gleaner needs on this host, each checked and, where it falls short,
// said how to fix: `gleaner doctor`.

#include <string>
#include <string_view>
#include <vector>

#include "net/tls.h"

namespace gleaner::daemon {

enum class CheckLevel { kOk, kWarn, kFail, kSkipped };

// "ok", "warn", "FAIL" or "skip".
std::string_view CheckLevelName(CheckLevel level);

struct HostCheck {
  std::string name;
  CheckLevel level;
  std::string detail;  // what was found, and for a problem how to fix it
};

struct HostCheckSetup {
  std::string data_dir;  // as given (empty: the default)
  std::string config;    // as given (empty: DATA_DIR's, or /etc/gleaner's for root)
  std::string fake;      // simulated GPUs: the driver is not checked
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string listen = "127.0.0.1:7380";  // the API's HOST:PORT, or none
  std::string store;                      // a store to open, or empty
  std::string store_file;                 // a file holding it
  net::TlsFiles tls;                      // the API's certificate and key
  // A coordinator to compare clocks with, and how to reach it over https.
  std::string server;
  net::TlsFiles server_tls;
};

// The driver and its NVML entry points, the GPUs' health, cgroups for
// jobs, the data directory, the config, the API's port, the store, the TLS
// files and the clock against a coordinator, in that order.
std::vector<HostCheck> CheckHost(const HostCheckSetup& setup);

}  // namespace gleaner::daemon
