#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace gleaner::cli {

// The process's peak resident memory in bytes, for timing reports.
int64_t PeakRssBytes();

// Writes each (file name, contents) into `dir`, created if missing. On
// failure says on `err` what failed and what to do, and returns false.
bool WriteOutputs(const std::string& dir,
                  const std::vector<std::pair<std::string, std::string>>& files, std::ostream& err);

}  // namespace gleaner::cli
