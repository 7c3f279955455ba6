#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <optional>
#include <string>

#include "agent/process_info.h"
#include "core/clock.h"
#include "net/tls.h"

namespace gleaner::cli {

struct GpusOptions {
  bool json = false;
  bool topology = false;
  std::optional<double> watch_s;  // refresh period; absent: print once
  std::string fake;               // scenario name or file; empty: real NVML
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string explain;       // a GPU (index, UUID or UUID prefix) to explain
  std::string data_dir;      // where a running monitor keeps its verdicts
  std::string forget_fault;  // a GPU's UUID (or "all") whose remembered Xid to forget
  std::string server;        // --server: a remote gleaner's GPUs, through its API
  std::string token;
  net::TlsFiles tls;  // for an https:// --server
};

// What the command needs from the outside world, injected so tests can
// drive it with a manual clock and a /proc of their own.
struct GpusEnv {
  const core::Clock& clock;
  const agent::ProcessInspector& inspector;
  std::ostream& out;
  std::ostream& err;
};

// Registers `gleaner gpus` on `app`; `options` receives the parsed flags.
CLI::App* AddGpusCommand(CLI::App& app, GpusOptions& options);

// Runs `gleaner gpus`; returns the process exit code (cli/exit_codes.h).
int RunGpus(const GpusOptions& options, const GpusEnv& env);

}  // namespace gleaner::cli
