#pragma once

#include <string>
#include <vector>

#include "sim/replay.h"
#include "sim/replay_metrics.h"

namespace gleaner::sim {

// report.html of a plain replay: one self-contained page (inline CSS and
// SVG, no scripts, no fonts or images to fetch) with the run's metrics and
// three charts: GPU utilization over time, jobs waiting over time (both
// time-weighted means over equal slices of the makespan) and the CDF of
// job completion times on a log axis. Deterministic: the same inputs give
// the same bytes (numbers are printed with fixed precision).
std::string RenderReplayReport(const std::vector<TraceJob>& jobs, const ReplayResult& result,
                               const ReplayIdentity& id, const ReplayMetrics& metrics);

}  // namespace gleaner::sim
