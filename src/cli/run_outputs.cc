#include "cli/run_outputs.h"

#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <utility>

namespace gleaner::cli {

int64_t PeakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return int64_t{usage.ru_maxrss} * 1024;  // Linux reports KiB
}

bool WriteSimOutputs(const std::string& dir, const SimOutputs& outputs, std::ostream& err) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    err << "gleaner: cannot create " << dir << ": " << ec.message()
        << "; give --out a directory you can write\n";
    return false;
  }
  const std::pair<const char*, const std::string*> files[] = {
      {"metrics.json", &outputs.metrics_json},
      {"timing.json", &outputs.timing_json},
      {"report.html", &outputs.report_html}};
  for (const auto& [name, text] : files) {
    const std::filesystem::path path = std::filesystem::path(dir) / name;
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << *text;
    f.close();
    if (!f) {
      err << "gleaner: cannot write " << path.string()
          << "; check that the --out directory is writable and the disk has room\n";
      return false;
    }
  }
  return true;
}

}  // namespace gleaner::cli
