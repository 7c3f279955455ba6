#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/bench_command.h"
#include "cli/exit_codes.h"
#include "core/result.h"
#include "lab/frag_experiment.h"
#include "lab/frag_workload.h"
#include "sim/openb_trace.h"

namespace gleaner::cli {
namespace {

// The experiment at seeds seed .. seed + runs - 1, each column averaged
// (the authors' published curves are means over their seeds too); the
// counts are the runs' means, rounded.
core::Result<lab::FragCurve> MeanCurve(const std::vector<sched::FragNodeSpec>& nodes,
                                       const std::vector<sched::FragPodSpec>& pods,
                                       const BenchFragOptions& options) {
  lab::FragCurve mean;
  double arrived = 0;
  double clones = 0;
  double failed = 0;
  double allocated = 0;
  for (int r = 0; r < options.runs; ++r) {
    lab::FragExperimentConfig config;
    config.policy = options.policy;
    config.tune = options.tune;
    config.seed = options.seed + static_cast<uint64_t>(r);
    GLEANER_ASSIGN_OR_RETURN(lab::FragCurve curve, lab::RunFragExperiment(nodes, pods, config));
    if (r == 0) {
      mean = curve;
      std::fill(mean.allocation_pct.begin(), mean.allocation_pct.end(), 0.0);
    }
    for (size_t x = 0; x < curve.allocation_pct.size(); ++x) {
      mean.allocation_pct[x] += curve.allocation_pct[x] / options.runs;
    }
    arrived += static_cast<double>(curve.pods_arrived) / options.runs;
    clones += static_cast<double>(curve.clones) / options.runs;
    failed += static_cast<double>(curve.pods_failed) / options.runs;
    allocated += static_cast<double>(curve.gpu_allocated_milli) / options.runs;
  }
  mean.pods_arrived = std::llround(arrived);
  mean.clones = std::llround(clones);
  mean.pods_failed = std::llround(failed);
  mean.gpu_allocated_milli = std::llround(allocated);
  return mean;
}

}  // namespace

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
  if (options.runs < 1) {
    err << "gleaner: --runs must be at least 1\n";
    return kExitBadInput;
  }
  auto variant = lab::ParseFragVariant(options.workload);
  if (!variant.ok()) {
    err << "gleaner: " << variant.status().message() << "\n";
    return kExitBadInput;
  }
  auto workload = lab::MakeFragWorkload(*pods, *nodes, *variant, options.workload_seed);
  if (!workload.ok()) {
    err << "gleaner: " << workload.status().message() << "\n";
    return kExitBadInput;
  }
  const auto run_start = std::chrono::steady_clock::now();
  auto curve = MeanCurve(*nodes, *workload, options);
  const auto end = std::chrono::steady_clock::now();
  if (!curve.ok()) {
    err << "gleaner: " << curve.status().message() << "\n";
    return kExitBadInput;
  }
  // Per experiment: the figure the one-second budget is about.
  const double wall_s =
      std::chrono::duration<double>(end - run_start).count() / static_cast<double>(options.runs);
  const double read_s = std::chrono::duration<double>(run_start - read_start).count();

  if (options.json) {
    nlohmann::json doc;
    doc["policy"] = curve->policy;
    doc["seed"] = options.seed;
    doc["tune"] = options.tune;
    doc["runs"] = options.runs;
    doc["workload"] = options.workload;
    doc["workload_seed"] = options.workload_seed;
    doc["pods"] = workload->size();
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
  char line[256];
  std::snprintf(line, sizeof line,
                "gleaner bench frag: policy %s, workload %s, seed %llu (%d run%s), tune %.2f: %lld "
                "pods arrived (%lld clones), %lld failed, %lld GPUs\n",
                curve->policy.c_str(), options.workload.c_str(),
                static_cast<unsigned long long>(options.seed), options.runs,
                options.runs == 1 ? "" : "s", options.tune,
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
  std::snprintf(line, sizeof line, "wall time %.3f s per run (reading the files %.3f s)\n", wall_s,
                read_s);
  out << line;
  return kExitOk;
}

}  // namespace gleaner::cli
