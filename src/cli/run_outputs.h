#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace gleaner::cli {

// The process's peak resident memory in bytes, for timing reports.
int64_t PeakRssBytes();

// What a simulator run leaves in its --out directory.
struct SimOutputs {
  std::string metrics_json;
  std::string timing_json;
  std::string report_html;
};

// Writes metrics.json, timing.json and report.html into `dir`, created if
// missing. On failure says on `err` what failed and what to do, and
// returns false.
bool WriteSimOutputs(const std::string& dir, const SimOutputs& outputs, std::ostream& err);

}  // namespace gleaner::cli
