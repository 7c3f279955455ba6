#pragma once

// The scheduler timed at a cluster's scale, on a synthetic cluster
// (sched/synthetic_cluster.h): `gleaner bench sched`
// (docs/benchmarks.md).

#include <chrono>
#include <cstdint>
#include <vector>

#include "core/result.h"

namespace gleaner::lab {

// Microseconds `f()` took, on the steady clock.
template <typename F>
double TimeUs(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
      .count();
}

struct SchedTimingSetup {
  int nodes = 5000;
  int gpus_per_node = 8;
  int pending = 100'000;
  int users = 101;       // jobs spread over this many users (7 projects)
  int ticks = 10;        // Ticks timed after the events, 30 s apart
  bool gang = false;     // jobs of 2, 4 and 8 GPUs instead of 1
  bool preempt = false;  // a full cluster of opportunistic jobs, critical jobs arriving
};

struct SchedTiming {
  std::vector<double> event_us;       // latency of each timed Handle call
  int64_t decisions = 0;              // jobs started (or, with `preempt`, preemption decisions)
  std::vector<double> full_tick_us;   // Ticks with every GPU taken
  std::vector<double> quota_tick_us;  // Ticks with GPUs free and the backlog held by quotas
};

// Without `preempt`: jobs wait and GPUs become lendable one verdict at a
// time, each verdict timed, then Ticks on the full cluster and on one
// whose backlog quotas hold. With it: critical jobs preempting
// opportunistic ones, each decision timed. An error is the scheduler's
// refusal of the synthetic cluster.
core::Result<SchedTiming> TimeScheduler(const SchedTimingSetup& setup);

}  // namespace gleaner::lab
