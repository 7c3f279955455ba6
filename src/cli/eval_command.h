#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>

namespace gleaner::cli {

struct EvalIdleOptions {
  std::string trace;
  std::string memory;
  std::string verdicts;
  bool json = false;
  bool skip_bad_rows = false;
  double busy_threshold_pct = 10;
  double idle_after_s = 300;
  double idle_after_with_history_s = 120;
  double min_confidence = 0.35;
};

// Registers `gleaner eval idle` on `app`.
CLI::App* AddEvalIdleCommand(CLI::App& app, EvalIdleOptions& options);

// Runs it; returns the exit code (cli/exit_codes.h).
int RunEvalIdle(const EvalIdleOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gleaner::cli
