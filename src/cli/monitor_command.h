#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <optional>
#include <string>

#include "agent/process_info.h"
#include "core/clock.h"
#include "net/tls.h"

namespace gleaner::cli {

inline constexpr const char* kDefaultListen = "127.0.0.1:7380";

struct MonitorOptions {
  std::string fake;
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string data_dir;
  std::string config;                // default: <data-dir>/gleaner.toml
  std::optional<double> interval_s;  // overrides the config
  std::optional<double> for_s;       // stop after this long (tests, demos)
  bool up = false;                   // gleaner up: serve the API (and harvest, unless told not to)
  bool harvest = false;              // also run queued jobs on idle GPUs
  bool shadow = false;               // place them as harvest would, start none
  // gleaner up: where the HTTP API listens for token holders; "none": only
  // the Unix socket. A default address that is taken is skipped with a
  // warning; one given explicitly must be served.
  std::string listen = std::string(kDefaultListen);
  bool listen_given = false;
  net::TlsFiles tls;  // gleaner up: the TCP API over TLS
  // The data dir's history came from another kind of GPU source (real or
  // simulated): write this one's there anyway.
  bool accept_gpu_source = false;
};

// Registers `gleaner monitor` (observe only).
CLI::App* AddMonitorCommand(CLI::App& app, MonitorOptions& options);
// Registers `gleaner up` (harvest by default; `--mode monitor` observes only).
CLI::App* AddUpCommand(CLI::App& app, MonitorOptions& options);

// Samples, judges, stores and alerts until SIGINT or SIGTERM (or --for).
int RunMonitor(const MonitorOptions& options, const core::Clock& clock,
               const agent::ProcessInspector& inspector, std::ostream& out, std::ostream& err);

}  // namespace gleaner::cli
