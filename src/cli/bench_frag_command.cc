#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/bench_command.h"
#include "cli/exit_codes.h"
#include "sched/frag_experiment.h"
#include "sim/openb_trace.h"

namespace gleaner::cli {

int RunBenchFrag(const BenchFragOptions& options, std::ostream& out, std::ostream& err) {
  const auto read_start = std::chrono::steady_clock::now();
  auto nodes = sim::ReadOpenbNodes(options.nodes);
  if (!nodes.ok()) {
    err << "gleaner: " << nodes.status().message() << "\n";
    return kExitBadInput;
  }
  auto pods = sim::ReadOpenbPods(options.pods);
  if (!pods.ok()) {
    err << "gleaner: " << pods.status().message() << "\n";
    return kExitBadInput;
  }
  const auto run_start = std::chrono::steady_clock::now();
  sched::FragExperimentConfig config;
  config.policy = options.policy;
  config.tune = options.tune;
  config.seed = options.seed;
  auto curve = sched::RunFragExperiment(*nodes, *pods, config);
  const auto end = std::chrono::steady_clock::now();
  if (!curve.ok()) {
    err << "gleaner: " << curve.status().message() << "\n";
    return kExitBadInput;
  }
  const double wall_s = std::chrono::duration<double>(end - run_start).count();
  const double read_s = std::chrono::duration<double>(run_start - read_start).count();

  if (options.json) {
    nlohmann::json doc;
    doc["policy"] = curve->policy;
    doc["seed"] = options.seed;
    doc["tune"] = options.tune;
    nlohmann::json pct = nlohmann::json::object();
    for (size_t x = 0; x < curve->allocation_pct.size(); ++x) {
      pct[std::to_string(x)] = curve->allocation_pct[x];
    }
    doc["allocation_pct"] = std::move(pct);
    doc["pods_arrived"] = curve->pods_arrived;
    doc["clones"] = curve->clones;
    doc["pods_failed"] = curve->pods_failed;
    doc["gpu_capacity_milli"] = curve->gpu_capacity_milli;
    doc["wall_s"] = wall_s;
    doc["read_s"] = read_s;
    out << doc.dump(2) << "\n";
    return kExitOk;
  }
  char line[160];
  std::snprintf(line, sizeof line,
                "gleaner bench frag: policy %s, seed %llu, tune %.2f: %lld pods arrived (%lld "
                "clones), %lld failed, %lld GPUs\n",
                curve->policy.c_str(), static_cast<unsigned long long>(options.seed), options.tune,
                static_cast<long long>(curve->pods_arrived), static_cast<long long>(curve->clones),
                static_cast<long long>(curve->pods_failed),
                static_cast<long long>(curve->gpu_capacity_milli / 1000));
  out << line << "arrived %   GPU allocated %\n";
  const size_t last = curve->allocation_pct.size() - 1;
  for (size_t x = 0; x <= last; ++x) {
    if (x % 10 != 0 && x != last) continue;
    std::snprintf(line, sizeof line, "%9zu   %15.2f\n", x, curve->allocation_pct[x]);
    out << line;
  }
  std::snprintf(line, sizeof line, "wall time %.3f s (reading the files %.3f s)\n", wall_s, read_s);
  out << line;
  return kExitOk;
}

}  // namespace gleaner::cli
