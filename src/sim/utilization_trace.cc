#include "sim/utilization_trace.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <optional>

#include "core/csv.h"

namespace gleaner::sim {
namespace {

struct Row {
  double time_s;
  double value;
};

bool ParseDouble(const std::string& text, double* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  // Underflow (1e-400) is a number, just a tiny one.
  const bool underflow = errno == ERANGE && std::abs(*out) < 1;
  return (errno == 0 || underflow) && end == text.c_str() + text.size();
}

// Times are seconds; anything beyond ±10^11 s (about 3,000 years) is not a
// timestamp and would overflow microsecond arithmetic.
constexpr double kMaxAbsTimeS = 1e11;

// Reads `path` into rows per series, by the header's column names.
core::Status ReadRows(const std::string& path, bool skip_bad_rows, TraceCleaning* cleaning,
                      std::map<std::string, std::vector<Row>>* out) {
  GLEANER_ASSIGN_OR_RETURN(core::CsvReader reader,
                           core::CsvReader::Open(path, core::CsvBlanks::kKeep));
  const auto column = [&](std::initializer_list<std::string_view> names) -> int {
    for (std::string_view n : names) {
      if (const std::optional<size_t> at = reader.Find(n)) return static_cast<int>(*at);
    }
    return -1;
  };
  const int value_col = column({"value"});
  const int time_col = column({"timestamp_anon", "timestamp"});
  const int id_col = column({"container_ip", "series", "gpu"});
  if (value_col < 0 || time_col < 0 || id_col < 0) {
    return core::InvalidArgument(path +
                                 ":1: expected a header with columns value, "
                                 "timestamp_anon (or timestamp) and container_ip; got \"" +
                                 reader.header_line() + "\"");
  }
  while (reader.Next()) {
    ++cleaning->rows;
    const std::vector<std::string>& f = reader.fields();
    std::string problem;
    Row row{};
    if (problem = reader.RowProblem(); !problem.empty()) {
    } else if (!ParseDouble(f[static_cast<size_t>(time_col)], &row.time_s) ||
               !(std::abs(row.time_s) <= kMaxAbsTimeS)) {
      problem =
          "timestamp is not a number of seconds: \"" + f[static_cast<size_t>(time_col)] + "\"";
    } else if (f[static_cast<size_t>(id_col)].empty()) {
      problem = "empty series id";
    } else if (!ParseDouble(f[static_cast<size_t>(value_col)], &row.value)) {
      problem = "value is not a number: \"" + f[static_cast<size_t>(value_col)] + "\"";
    }
    if (problem.empty() && !std::isfinite(row.value)) {
      ++cleaning->non_finite;
      continue;
    }
    if (!problem.empty()) {
      if (skip_bad_rows) {
        ++cleaning->bad_rows_skipped;
        continue;
      }
      return core::InvalidArgument(reader.At(problem) +
                                   " (pass --skip-bad-rows to skip such rows)");
    }
    (*out)[f[static_cast<size_t>(id_col)]].push_back(row);
  }
  return core::Status::Ok();
}

core::TimePoint At(double seconds) {
  return core::FromUnixMicros(static_cast<int64_t>(std::llround(seconds * 1e6)));
}

}  // namespace

core::Result<std::vector<UtilizationSeries>> ReadUtilizationTrace(const std::string& path,
                                                                  const std::string& memory_path,
                                                                  bool skip_bad_rows,
                                                                  TraceCleaning* cleaning) {
  std::map<std::string, std::vector<Row>> utilization;
  GLEANER_RETURN_IF_ERROR(ReadRows(path, skip_bad_rows, cleaning, &utilization));
  std::map<std::string, std::vector<Row>> memory;
  if (!memory_path.empty()) {
    TraceCleaning memory_cleaning;
    GLEANER_RETURN_IF_ERROR(ReadRows(memory_path, skip_bad_rows, &memory_cleaning, &memory));
    for (auto& [id, rows] : memory) {
      std::sort(rows.begin(), rows.end(),
                [](const Row& a, const Row& b) { return a.time_s < b.time_s; });
    }
  }
  std::vector<UtilizationSeries> out;
  for (auto& [id, rows] : utilization) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& a, const Row& b) { return a.time_s < b.time_s; });
    UtilizationSeries series{id, {}};
    const std::vector<Row>* mem = nullptr;
    if (auto it = memory.find(id); it != memory.end()) mem = &it->second;
    for (const Row& r : rows) {
      if (!series.points.empty() && At(r.time_s) == series.points.back().at) {
        ++cleaning->duplicate_times;
        continue;
      }
      UtilizationPoint p{At(r.time_s), r.value, std::nullopt};
      if (mem != nullptr && !mem->empty()) {
        auto it = std::lower_bound(mem->begin(), mem->end(), r.time_s,
                                   [](const Row& m, double t) { return m.time_s < t; });
        const Row* best = nullptr;
        if (it != mem->end()) best = &*it;
        if (it != mem->begin() &&
            (best == nullptr || r.time_s - (it - 1)->time_s < best->time_s - r.time_s)) {
          best = &*(it - 1);
        }
        // Memory beyond 2^60 bytes is not a reading.
        if (best != nullptr && std::abs(best->time_s - r.time_s) <= 60 && best->value >= 0 &&
            best->value < 1.15e18) {
          p.memory_used = core::Bytes(static_cast<uint64_t>(best->value));
        }
      }
      series.points.push_back(p);
    }
    out.push_back(std::move(series));
  }
  return out;
}

core::Duration MedianStep(const std::vector<UtilizationSeries>& series) {
  std::vector<core::Duration> steps;
  for (const UtilizationSeries& s : series) {
    for (size_t i = 1; i < s.points.size(); ++i)
      steps.push_back(s.points[i].at - s.points[i - 1].at);
  }
  if (steps.empty()) return {};
  std::nth_element(steps.begin(), steps.begin() + static_cast<ptrdiff_t>(steps.size() / 2),
                   steps.end());
  return steps[steps.size() / 2];
}

}  // namespace gleaner::sim
