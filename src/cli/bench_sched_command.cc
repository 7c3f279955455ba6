#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/bench_command.h"
#include "cli/exit_codes.h"
#include "cli/run_outputs.h"
#include "lab/sched_timing.h"

namespace gleaner::cli {

int RunBenchSched(const BenchSchedOptions& o, std::ostream& out, std::ostream& err) {
  auto scenario = lab::ParseSchedScenario(o.preempt ? "preempt" : o.scenario);
  if (!scenario.ok()) {
    err << "gleaner: --scenario: " << scenario.status().message() << "\n";
    return kExitUsage;
  }
  lab::SchedTimingSetup setup = o.setup;
  setup.scenario = *scenario;
  auto timed = lab::TimeScheduler(setup);
  if (!timed.ok()) {
    err << "gleaner: bench sched: " << timed.status().message() << "\n";
    return timed.status().code() == core::StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  const lab::SchedTiming& m = *timed;
  const lab::SchedSummary sum = lab::Summarize(m);
  const int64_t rss = PeakRssBytes();
  const bool gangs = setup.scenario == lab::SchedScenario::kGangs ||
                     setup.scenario == lab::SchedScenario::kMultiNodeGangs;
  if (o.json) {
    nlohmann::json doc;
    doc["scenario"] = lab::SchedScenarioName(setup.scenario);
    doc["nodes"] = setup.nodes;
    doc["gpus_per_node"] = setup.gpus_per_node;
    doc["pending"] = setup.pending;
    doc["gang"] = setup.gang;
    if (gangs) doc["gang_size"] = setup.gang_size;
    doc["events"] = m.event_us.size();
    doc["placements"] = m.decisions;
    doc["placements_per_s"] = sum.decisions_per_s;
    doc["p50_us"] = sum.p50_us;
    doc["p99_us"] = sum.p99_us;
    doc["users"] = setup.users;
    doc["full_tick"] = {{"ticks", m.full_tick_us.size()},
                        {"p50_ms", sum.full_tick_p50_ms},
                        {"max_ms", sum.full_tick_max_ms}};
    doc["quota_tick"] = {{"ticks", m.quota_tick_us.size()},
                         {"p50_ms", sum.quota_tick_p50_ms},
                         {"max_ms", sum.quota_tick_max_ms}};
    doc["rss_bytes"] = rss;
    out << doc.dump(2) << "\n";
    return kExitOk;
  }
  std::string shape;
  if (gangs) {
    shape = ", gangs of " + std::to_string(setup.gang_size) +
            (setup.scenario == lab::SchedScenario::kGangs ? " GPUs" : " nodes");
  } else if (setup.gang) {
    shape = ", gangs of 2/4/8";
  }
  char line[300];
  std::snprintf(line, sizeof line,
                "gleaner bench sched: %s, %d nodes x %d GPUs%s\n"
                "%lld %s in %zu events: %.0f/s; latency per event p50 %.1f us, p99 %.1f us; "
                "peak memory %.1f MiB\n",
                std::string(lab::SchedScenarioName(setup.scenario)).c_str(), setup.nodes,
                setup.gpus_per_node, shape.c_str(), static_cast<long long>(m.decisions),
                std::string(lab::DecisionsName(setup.scenario)).c_str(), m.event_us.size(),
                sum.decisions_per_s, sum.p50_us, sum.p99_us, static_cast<double>(rss) / (1 << 20));
  out << line;
  if (!m.full_tick_us.empty() || !m.quota_tick_us.empty()) {
    std::snprintf(line, sizeof line,
                  "ticks (%d users): cluster full p50 %.2f ms, max %.2f ms; GPUs free, backlog "
                  "held by quotas p50 %.2f ms, max %.2f ms\n",
                  setup.users, sum.full_tick_p50_ms, sum.full_tick_max_ms, sum.quota_tick_p50_ms,
                  sum.quota_tick_max_ms);
    out << line;
  }
  return kExitOk;
}

}  // namespace gleaner::cli
