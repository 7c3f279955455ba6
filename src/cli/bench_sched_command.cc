#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

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
  const int64_t rss = PeakRssBytes();
  std::vector<double> us = m.event_us;
  std::sort(us.begin(), us.end());
  double total_us = 0;
  for (double u : us) total_us += u;
  const double rate = total_us > 0 ? static_cast<double>(m.decisions) / (total_us / 1e6) : 0;
  const double p50 = us.empty() ? 0 : us[us.size() / 2];
  const double p99 = us.empty() ? 0 : us[std::min(us.size() - 1, us.size() * 99 / 100)];
  const bool preempting = setup.scenario == lab::SchedScenario::kPreempt ||
                          setup.scenario == lab::SchedScenario::kPreemptGangs;
  const bool gangs = setup.scenario == lab::SchedScenario::kGangs ||
                     setup.scenario == lab::SchedScenario::kMultiNodeGangs;
  const char* what = preempting ? "preemption decisions" : gangs ? "gangs placed" : "placements";
  const auto median_ms = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2] / 1000;
  };
  const auto max_ms = [](const std::vector<double>& v) {
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end()) / 1000;
  };
  if (o.json) {
    nlohmann::json doc;
    doc["scenario"] = lab::SchedScenarioName(setup.scenario);
    doc["nodes"] = o.setup.nodes;
    doc["gpus_per_node"] = o.setup.gpus_per_node;
    doc["pending"] = o.setup.pending;
    doc["gang"] = o.setup.gang;
    doc["preempt"] = preempting;
    if (gangs) doc["gang_size"] = setup.gang_size;
    doc["events"] = us.size();
    doc["placements"] = m.decisions;
    doc["placements_per_s"] = rate;
    doc["p50_us"] = p50;
    doc["p99_us"] = p99;
    doc["users"] = o.setup.users;
    doc["full_tick"] = {{"ticks", m.full_tick_us.size()},
                        {"p50_ms", median_ms(m.full_tick_us)},
                        {"max_ms", max_ms(m.full_tick_us)}};
    doc["quota_tick"] = {{"ticks", m.quota_tick_us.size()},
                         {"p50_ms", median_ms(m.quota_tick_us)},
                         {"max_ms", max_ms(m.quota_tick_us)}};
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
                std::string(lab::SchedScenarioName(setup.scenario)).c_str(), o.setup.nodes,
                o.setup.gpus_per_node, shape.c_str(), static_cast<long long>(m.decisions), what,
                us.size(), rate, p50, p99, static_cast<double>(rss) / (1 << 20));
  out << line;
  if (!m.full_tick_us.empty() || !m.quota_tick_us.empty()) {
    std::snprintf(line, sizeof line,
                  "ticks (%d users): cluster full p50 %.2f ms, max %.2f ms; GPUs free, backlog "
                  "held by quotas p50 %.2f ms, max %.2f ms\n",
                  o.setup.users, median_ms(m.full_tick_us), max_ms(m.full_tick_us),
                  median_ms(m.quota_tick_us), max_ms(m.quota_tick_us));
    out << line;
  }
  return kExitOk;
}

}  // namespace gleaner::cli
