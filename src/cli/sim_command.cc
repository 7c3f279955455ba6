#include "cli/sim_command.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <ostream>

#include "cli/exit_codes.h"
#include "cli/run_outputs.h"
#include "cli/sim_cross_command.h"
#include "sim/priced_cluster.h"
#include "sim/replay.h"
#include "sim/replay_jobs.h"
#include "sim/replay_metrics.h"
#include "sim/replay_policy.h"
#include "sim/replay_report.h"

namespace gleaner::cli {

CLI::App* AddSimCommands(CLI::App& app, SimReplayOptions& o) {
  CLI::App* sim = app.add_subcommand("sim", "Replay real cluster traces through gleaner's policy");
  sim->require_subcommand(1);
  CLI::App* replay = sim->add_subcommand(
      "replay",
      "Replay a job trace (ITP jobs or openb pods) on a cluster of N GPUs under one policy; "
      "writes metrics.json, timing.json and report.html into --out");
  auto* trace = replay->add_option_group("trace", "The job trace: exactly one");
  trace->add_option("--itp", o.itp, "ITP job CSV: job_id,submission_time,duration,num_gpu")
      ->check(CLI::ExistingFile);
  trace
      ->add_option("--openb", o.openb,
                   "Alibaba openb pod CSV (openb_pod_list_*.csv): pods with GPUs that were "
                   "scheduled, each share of a GPU as a whole one, priority from qos")
      ->check(CLI::ExistingFile);
  trace->require_option(1);
  replay
      ->add_option("--gpus", o.gpus,
                   "GPUs in the simulated cluster (a multiple of --gpus-per-node)")
      ->check(CLI::Range(1, 10'000'000));
  replay
      ->add_option("--openb-nodes", o.openb_nodes,
                   "Instead of --gpus: the nodes of an openb node list "
                   "(openb_node_list_gpu_node.csv) whose GPU model has a catalog price and a "
                   "published speed, for --openb pods with their model constraints under "
                   "--policy gleaner; metrics.json then prices the GPU-hours")
      ->check(CLI::ExistingFile);
  replay->add_flag("--no-cost-aware", o.no_cost_aware,
                   "With --openb-nodes: place by fit alone, not the cheapest useful GPU-hour");
  replay->add_option("--gpus-per-node", o.gpus_per_node, "GPUs per node")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  replay->add_option("--policy", o.policy, std::string("Policy: ") + sim::kReplayPolicyNames)
      ->capture_default_str()
      ->check(CLI::IsMember({"fifo", "sjf", "priority", "gleaner"}));
  replay->add_option("--out", o.out_dir, "Directory for the outputs (created if missing)")
      ->required();
  replay
      ->add_option("--seed", o.seed,
                   "Seed for random choices (recorded; the current policies make none)")
      ->capture_default_str();
  replay->add_flag("--skip-bad-rows", o.skip_bad_rows,
                   "Skip and count malformed rows instead of stopping at the first");
  return replay;
}

CLI::App* AddSimCrossCommand(CLI::App& app, SimCrossOptions& o) {
  CLI::App* cross = app.get_subcommand("sim")->add_subcommand(
      "cross-cluster",
      "On the Helios VCs: pending GPU-hours that other VCs' idle GPUs could have run; writes "
      "metrics.json, timing.json and report.html into --out");
  cross->add_option("--helios", o.helios_dir, "Folder with the Helios vc*.csv files")->required();
  cross->add_option("--out", o.out_dir, "Directory for the outputs (created if missing)")
      ->required();
  cross->add_flag("--skip-bad-rows", o.skip_bad_rows,
                  "Skip and count malformed rows instead of stopping at the first");
  return cross;
}

int RunSimReplay(const SimReplayOptions& o, std::ostream& out, std::ostream& err) {
  const auto start = std::chrono::steady_clock::now();
  if (o.itp.empty() == o.openb.empty()) {
    err << "gleaner: sim replay needs exactly one trace: --itp FILE or --openb FILE\n";
    return kExitUsage;
  }
  if ((o.gpus > 0) == !o.openb_nodes.empty()) {
    err << "gleaner: sim replay needs exactly one cluster: --gpus N or --openb-nodes FILE\n";
    return kExitUsage;
  }
  if (!o.openb_nodes.empty() && (o.openb.empty() || o.policy != "gleaner")) {
    err << "gleaner: --openb-nodes replays --openb pods under --policy gleaner only\n";
    return kExitUsage;
  }
  if (o.no_cost_aware && o.openb_nodes.empty()) {
    err << "gleaner: --no-cost-aware needs --openb-nodes (a cluster of several models)\n";
    return kExitUsage;
  }
  auto trace = sim::ReadReplayJobs(o.itp, o.openb, o.skip_bad_rows);
  if (!trace.ok()) {
    err << "gleaner: " << trace.status().message() << "\n";
    return kExitBadInput;
  }
  for (const std::string& m : trace->skipped_messages) err << "gleaner: skipped " << m << "\n";
  if (trace->skipped_rows > static_cast<int64_t>(trace->skipped_messages.size())) {
    err << "gleaner: skipped " << trace->skipped_rows << " dirty rows in all\n";
  }
  sim::ReplayConfig config;
  config.gpus = o.gpus;
  config.gpus_per_node = o.gpus_per_node;
  config.policy = o.policy;
  std::optional<int64_t> without_a_node;
  if (!o.openb_nodes.empty()) {
    auto cluster = sim::ReadPricedOpenbCluster(o.openb_nodes);
    if (!cluster.ok()) {
      err << "gleaner: " << cluster.status().message() << "\n";
      return kExitBadInput;
    }
    for (const std::string& p : cluster->priced) out << "priced " << p << "\n";
    for (const std::string& l : cluster->left_out) out << "left out unpriced " << l << "\n";
    without_a_node = sim::DropJobsWithoutANode(cluster->nodes, &trace->jobs);
    config.nodes = std::move(cluster->nodes);
    config.model_price = std::move(cluster->price);
    config.cost_aware = !o.no_cost_aware;
    config.gpus = cluster->gpus;
    config.gpus_per_node = cluster->largest_node;
  }
  auto result = sim::RunReplay(trace->jobs, config);
  if (!result.ok()) {
    err << "gleaner: " << result.status().message() << "\n";
    return result.status().code() == core::StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  const sim::ReplayMetrics metrics = sim::ComputeReplayMetrics(trace->jobs, *result, config.gpus);
  sim::ReplayIdentity id;
  id.trace = std::filesystem::path(o.itp.empty() ? o.openb : o.itp).filename().string();
  id.policy = o.policy;
  id.gpus = config.gpus;
  id.gpus_per_node = config.gpus_per_node;
  id.left_out_without_a_node = without_a_node;
  id.cost_aware = config.cost_aware;
  id.seed = o.seed;
  id.skipped_rows = trace->skipped_rows;
  id.gangs_started = result->gangs_started;
  id.left_out = trace->left_out;
  const std::string metrics_json = sim::ReplayMetricsJson(id, metrics).dump(2) + "\n";
  const std::string report = sim::RenderReplayReport(trace->jobs, *result, id, metrics);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  nlohmann::ordered_json timing;
  timing["wall_s"] = wall_s;
  timing["jobs_per_s"] = wall_s > 0 ? static_cast<double>(metrics.jobs) / wall_s : 0;
  timing["peak_rss_bytes"] = PeakRssBytes();
  timing["instants"] = result->instants;

  if (!WriteSimOutputs(o.out_dir, {metrics_json, timing.dump(2) + "\n", report}, err))
    return kExitFailure;
  char line[400];
  std::snprintf(line, sizeof line,
                "gleaner sim replay: %lld jobs, policy %s, %d GPUs: makespan %lld s, utilization "
                "%.2f %%, mean JCT %.0f s, mean queue %.0f s; %.3f s wall (%.0f jobs/s)\n",
                static_cast<long long>(metrics.jobs), o.policy.c_str(), config.gpus,
                static_cast<long long>(metrics.makespan_s), 100 * metrics.utilization,
                metrics.jct.mean_s, metrics.queue.mean_s, wall_s,
                wall_s > 0 ? static_cast<double>(metrics.jobs) / wall_s : 0);
  out << line;
  if (trace->left_out) {
    out << "left out " << trace->left_out->without_gpus << " pods without GPUs and "
        << trace->left_out->never_scheduled << " never scheduled\n";
  }
  if (without_a_node) out << "left out " << *without_a_node << " pods no priced node can run\n";
  if (metrics.cost) {
    std::snprintf(line, sizeof line,
                  "GPU-hour cost %.2f USD for %.1f A100-hours of work (%.4f USD each), cost-aware "
                  "%s\n",
                  metrics.cost->gpu_hour_cost, metrics.cost->work_a100_hours,
                  metrics.cost->work_a100_hours > 0
                      ? metrics.cost->gpu_hour_cost / metrics.cost->work_a100_hours
                      : 0,
                  config.cost_aware ? "on" : "off");
    out << line;
  }
  out << "wrote " << (std::filesystem::path(o.out_dir) / "metrics.json").string()
      << ", timing.json, report.html\n";
  return kExitOk;
}

}  // namespace gleaner::cli
