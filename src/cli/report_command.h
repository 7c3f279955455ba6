#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>

#include "core/clock.h"

namespace gleaner::cli {

// `gleaner report` (docs/report.md): the periodic HTML report of this
// site, from `gleaner up`'s store.
struct ReportOptions {
  std::string since = "7d";  // a span back from now, or YYYY-MM-DD
  std::string until;         // YYYY-MM-DD; "" = now
  std::string out = "gleaner-report.html";
  std::string config;  // the running policy (default DATA_DIR/gleaner.toml)
  std::string data_dir;
};

CLI::App* AddReportCommand(CLI::App& app, ReportOptions& options);
int RunReport(const ReportOptions& options, core::TimePoint now, std::ostream& out,
              std::ostream& err);

}  // namespace gleaner::cli
