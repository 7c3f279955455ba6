#pragma once

// The scheduler timed at a cluster's scale, on a synthetic cluster
// (sched/synthetic_cluster.h): `gleaner bench sched` (docs/benchmarks.md).
// Each figure is the latency of one Scheduler::Handle call, timed around
// the call.

#include <chrono>
#include <cstdint>
#include <string_view>
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

// What is timed.
enum class SchedScenario {
  // Jobs wait; GPUs become lendable one verdict at a time (the harvesting
  // daemon's case), each verdict an event; then Ticks on the full cluster
  // and on one whose backlog quotas hold.
  kVerdicts,
  // The same queue; nodes register one at a time, each filled at once.
  kNodesAdded,
  // Every GPU runs an opportunistic job past its protection; critical
  // single-GPU jobs arrive, each preempting one victim.
  kPreempt,
  // A gang of `gang_size` GPUs on one node, submitted into a cluster half
  // full of single-GPU jobs scattered at random, then ended (untimed).
  kGangs,
  // A gang of `gang_size` whole nodes in racks of 40: every tenth node free,
  // half the single-GPU jobs elsewhere ended; then ended (untimed).
  kMultiNodeGangs,
  // The cluster full of opportunistic jobs but the upper half of the GPUs of
  // its last fifth of nodes: a critical whole-node gang fits nowhere, and
  // each submit searches for victims and preempts half a node. The gang is
  // cancelled (untimed); its victims never leave, so the next picks
  // another node.
  kPreemptGangs,
};

std::string_view SchedScenarioName(SchedScenario s);
// "verdicts, nodes-added, preempt, gangs, multi-node-gangs or preempt-gangs".
std::string_view SchedScenarioList();
core::Result<SchedScenario> ParseSchedScenario(std::string_view name);

struct SchedTimingSetup {
  SchedScenario scenario = SchedScenario::kVerdicts;
  int nodes = 5000;
  int gpus_per_node = 8;
  int pending = 100'000;  // kVerdicts, kNodesAdded: jobs waiting; kPreempt: critical arrivals
  int users = 101;        // jobs spread over this many users (7 projects)
  int ticks = 10;         // kVerdicts: Ticks timed after the events, 30 s apart
  bool gang = false;      // kVerdicts, kNodesAdded: jobs of 2, 4 and 8 GPUs instead of 1
  int gang_size = 8;      // kGangs: GPUs a gang; kMultiNodeGangs: nodes a gang
  int events = 2000;      // kGangs, kMultiNodeGangs, kPreemptGangs: submits timed
};

struct SchedTiming {
  std::vector<double> event_us;       // latency of each timed Handle call
  int64_t decisions = 0;              // jobs started (or, preempting, preemption decisions)
  std::vector<double> full_tick_us;   // Ticks with every GPU taken
  std::vector<double> quota_tick_us;  // Ticks with GPUs free and the backlog held by quotas
};

// What a run's latencies say: decisions a second of the events' time, one
// event's percentiles, and each kind of tick's median and worst.
struct SchedSummary {
  double decisions_per_s = 0;
  double p50_us = 0;
  double p99_us = 0;
  double full_tick_p50_ms = 0;
  double full_tick_max_ms = 0;
  double quota_tick_p50_ms = 0;
  double quota_tick_max_ms = 0;
};
SchedSummary Summarize(const SchedTiming& timing);

// What a scenario's decisions are: "placements", "gangs placed" or
// "preemption decisions".
std::string_view DecisionsName(SchedScenario s);

// Times `setup.scenario`. An error is the scheduler's refusal of the
// synthetic cluster, or a cluster too small for the scenario.
core::Result<SchedTiming> TimeScheduler(const SchedTimingSetup& setup);

}  // namespace gleaner::lab
