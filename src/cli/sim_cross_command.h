#pragma once

#include <iosfwd>
#include <string>

namespace gleaner::cli {

// `gleaner sim cross-cluster`: how many pending GPU-hours of the Helios
// virtual clusters could have run on other VCs' idle GPUs
// (docs/simulator.md). Registered by AddSimCrossCommand (cli/sim_command.h).
struct SimCrossOptions {
  std::string helios_dir;  // holds the vc*.csv files
  std::string out_dir;
  bool skip_bad_rows = false;
};

// Runs it: writes metrics.json, timing.json and report.html into out_dir
// (created if missing) and a short summary to `out`; messages about bad
// input go to `err`. Returns the exit code (cli/exit_codes.h): 2 when
// helios_dir is not a directory, 4 when it holds no vc*.csv file or a
// dirty row (unless skip_bad_rows).
int RunSimCross(const SimCrossOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gleaner::cli
