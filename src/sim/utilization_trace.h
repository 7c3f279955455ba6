#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/units.h"

namespace gleaner::sim {

// One GPU's utilization over time, from a trace.
struct UtilizationPoint {
  core::TimePoint at;
  double utilization_pct = 0;
  std::optional<core::Bytes> memory_used;
};

struct UtilizationSeries {
  std::string id;
  std::vector<UtilizationPoint> points;  // sorted by time, no duplicate times
};

// What a reader fixed or dropped, so a report can say so.
struct TraceCleaning {
  int64_t rows = 0;
  int64_t duplicate_times = 0;   // a second row for a series and time: the first is kept
  int64_t non_finite = 0;        // NaN or infinite values: dropped (a gap, never idle)
  int64_t bad_rows_skipped = 0;  // only with skip_bad_rows
};

// Reads per-series utilization in the format of the Alibaba GenAI trace's
// pod_gpu_duty_cycle_anon.csv: a header naming `value` (percent),
// `timestamp_anon` or `timestamp` (seconds) and `container_ip` (the series),
// in any column order. `memory_path`, when given, is the matching
// pod_gpu_memory_used_bytes file; each point takes the memory sample of its
// series nearest in time (within 60 s).
//
// A row that does not parse is an error naming the file and line, unless
// `skip_bad_rows`, when it is counted and skipped. Rows may come in any
// order; series come back sorted by id.
// The median time between consecutive samples of a series, over all
// series; zero with fewer than two samples in each.
core::Duration MedianStep(const std::vector<UtilizationSeries>& series);

core::Result<std::vector<UtilizationSeries>> ReadUtilizationTrace(const std::string& path,
                                                                  const std::string& memory_path,
                                                                  bool skip_bad_rows,
                                                                  TraceCleaning* cleaning);

}  // namespace gleaner::sim
