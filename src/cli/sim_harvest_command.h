#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <string>

#include "sim/harvest_inputs.h"

namespace gleaner::cli {

// `gleaner sim harvest`: an owner workload from a trace, an opportunistic
// queue, and every harvesting baseline over them (docs/simulator.md).
struct SimHarvestOptions {
  sim::OwnerTraceFiles owner;     // exactly one trace
  sim::HarvestQueueSource queue;  // an ITP job file, or the synthetic generator
  int64_t checkpoint_s = 1800;
  int64_t vacate_s = 30;
  // The traces do not say which GPUs they ran on: money prices them as this.
  std::string price_gpu = "A100-80GB";
  // Co-location and parking (runs only where the trace shows owners' memory).
  double gpu_memory_gib = 80;
  double colocate_margin = 0.10;
  int64_t colocate_min_history_s = 3600;
  int64_t park_idle_s = 1800;
  int64_t park_notice_s = 300;
  double restore_gb_per_s = 5;
  // What placement knows of job lengths: none, history or declared
  // (sim::RuntimeKnowledge).
  std::string runtimes = "history";
  // [idle] min_expected_quiet_s: a free GPU expected quiet less is not lent.
  int64_t min_expected_quiet_s = 900;
  std::string out_dir;
  bool skip_bad_rows = false;  // in the owners' trace and the queue's
};

// Registers `harvest` under the `sim` command.
CLI::App* AddSimHarvestCommand(CLI::App& sim, SimHarvestOptions& options);

// Runs it: writes metrics.json, timing.json and report.html into out_dir and
// a summary to `out`. Returns the exit code (cli/exit_codes.h).
int RunSimHarvest(const SimHarvestOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gleaner::cli
