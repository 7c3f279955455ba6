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

struct EvalForecastOptions {
  std::string trace;
  bool json = false;
  bool skip_bad_rows = false;
  double busy_threshold_pct = 10;
};

// Registers `gleaner eval idle` and `gleaner eval forecast` on `app`.
struct EvalCommands {
  CLI::App* idle = nullptr;
  CLI::App* forecast = nullptr;
};
EvalCommands AddEvalCommands(CLI::App& app, EvalIdleOptions& idle, EvalForecastOptions& forecast);

// Run them; return the exit code (cli/exit_codes.h).
int RunEvalIdle(const EvalIdleOptions& options, std::ostream& out, std::ostream& err);
int RunEvalForecast(const EvalForecastOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gleaner::cli
