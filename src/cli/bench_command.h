#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <string>

#include "lab/sched_timing.h"

namespace gleaner::cli {

// `gleaner bench frag`: the FGD paper's fragmentation experiment on openb
// trace files (docs/fragmentation.md).
struct BenchFragOptions {
  std::string pods;
  std::string nodes;
  std::string policy = "gleaner";
  double tune = 1.3;
  uint64_t seed = 42;
  int runs = 1;                      // seeds seed .. seed + runs - 1, curves averaged
  std::string workload = "default";  // a variant drawn from the pods (lab/frag_workload.h)
  uint64_t workload_seed = 1;
  bool json = false;
};

// `gleaner bench sched`: the scheduler on a synthetic cluster and queue.
struct BenchSchedOptions {
  lab::SchedTimingSetup setup;
  std::string scenario = "verdicts";  // lab::SchedScenario's name
  bool preempt = false;               // --preempt: --scenario preempt
  bool json = false;
};

struct BenchCommands {
  CLI::App* frag = nullptr;
  CLI::App* sched = nullptr;
};

// Registers `gleaner bench frag` and `gleaner bench sched` on `app`.
BenchCommands AddBenchCommands(CLI::App& app, BenchFragOptions& frag, BenchSchedOptions& sched);

// Run them; each returns the exit code (cli/exit_codes.h).
int RunBenchFrag(const BenchFragOptions& options, std::ostream& out, std::ostream& err);
int RunBenchSched(const BenchSchedOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gleaner::cli
