#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/replay_metrics.h"
#include "sim/trace_job.h"

namespace gleaner::sim {

// The jobs of a replay's trace (an ITP job file or openb pods), with what it skipped and left out.
struct ReplayJobs {
  std::vector<TraceJob> jobs;
  int64_t skipped_rows = 0;
  std::vector<std::string> skipped_messages;
  std::optional<ReplayLeftOut> left_out;
};

// Reads `itp` when given, else `openb`; `skip_bad_rows` skips (and
// counts) rows that do not parse instead of stopping.
core::Result<ReplayJobs> ReadReplayJobs(const std::string& itp, const std::string& openb,
                                        bool skip_bad_rows);

}  // namespace gleaner::sim
