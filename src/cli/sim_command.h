#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace gleaner::cli {

// `gleaner sim replay`: a job trace (an ITP job file or openb pods: exactly
// one of the two) replayed on a cluster of N GPUs under one policy
// (docs/simulator.md).
struct SimReplayOptions {
  std::string itp;
  std::string openb;
  int gpus = 0;
  int gpus_per_node = 8;
  std::string policy = "fifo";
  std::string out_dir;
  uint64_t seed = 0;
  bool skip_bad_rows = false;
  std::string openb_nodes;  // a cluster of several models instead of --gpus
  bool no_cost_aware = false;
};

// Registers `gleaner sim replay` on `app`; returns the replay subcommand.
CLI::App* AddSimCommands(CLI::App& app, SimReplayOptions& replay);

// Registers `gleaner sim cross-cluster` (cli/sim_cross_command.h) under the
// `sim` command AddSimCommands made on `app`; returns the subcommand.
struct SimCrossOptions;
CLI::App* AddSimCrossCommand(CLI::App& app, SimCrossOptions& cross);

// Runs it: writes metrics.json, timing.json and report.html into out_dir
// (created if missing) and a one-paragraph summary to `out`. Returns the
// exit code (cli/exit_codes.h).
int RunSimReplay(const SimReplayOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gleaner::cli
