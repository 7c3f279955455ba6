#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "core/units.h"
#include "sched/cluster_state.h"

namespace gleaner::sched {

// How well the expected quiet of the GPUs a job would take fits its
// expected runtime, for ordering placements: lower is better. A window
// that covers the runtime beats an unknown one, which beats one too short;
// among covering windows the tightest wins (long windows stay for long
// jobs), among short ones the longest.
struct WindowFit {
  int miss = 0;       // 0 covered (or no runtime guess), 1 a window unknown, 2 too short
  int64_t slack = 0;  // seconds: covered, window less runtime; short, runtime less window

  auto operator<=>(const WindowFit&) const = default;
};

// The fit of windows `quiet_p80` (zero: unknown) for a job expected to run
// `runtime` (zero: unknown, which fits anything equally).
WindowFit FitWindows(const std::vector<core::Duration>& quiet_p80, core::Duration runtime);
WindowFit FitGpus(const ClusterState& cluster, const std::vector<GpuIndex>& gpus,
                  core::Duration runtime);

// The placement's reason: "expected idle >= 4h 16m at p80 (the shortest of its
// GPUs); job expected 40m (declared)". Empty without a runtime or a window.
std::string DescribeWindowFit(const ClusterState& cluster, const std::vector<GpuIndex>& gpus,
                              core::Duration runtime, const std::string& basis);

// A forecast rounded down to a power of two minutes (1, 2, 4, ... min;
// zero stays zero, under a minute is zero): the scheduler is told again
// only when the window halves or doubles, not at every sample.
core::Duration RoundQuietWindow(core::Duration quiet_p80);

}  // namespace gleaner::sched
