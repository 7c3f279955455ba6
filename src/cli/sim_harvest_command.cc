#include "cli/sim_harvest_command.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "cli/exit_codes.h"
#include "cli/run_outputs.h"
#include "cost/catalog.h"
#include "sim/harvest_inputs.h"
#include "sim/harvest_money.h"
#include "sim/harvest_report.h"
#include "sim/harvest_scenario.h"

namespace gleaner::cli {

CLI::App* AddSimHarvestCommand(CLI::App& sim, SimHarvestOptions& o) {
  CLI::App* h = sim.add_subcommand(
      "harvest",
      "Replay an owner workload from a trace with an opportunistic queue under every "
      "harvesting baseline (none, naive, gleaner); writes metrics.json, timing.json and "
      "report.html into --out");
  auto* owner = h->add_option_group("owner", "The owner workload: exactly one");
  owner
      ->add_option("--genai", o.owner.genai,
                   "Alibaba GenAI pod_gpu_duty_cycle CSV (one GPU per pod)")
      ->check(CLI::ExistingFile);
  owner
      ->add_option("--helios", o.owner.helios,
                   "A Helios Earth VC CSV, or a folder of vc*.csv side by side")
      ->check(CLI::ExistingPath);
  owner->add_option("--philly", o.owner.philly, "Philly philly_node_sequence.csv (whole nodes)")
      ->check(CLI::ExistingFile);
  owner->require_option(1);
  h->add_option("--philly-machines", o.owner.philly_machines,
                "Philly cluster_machine_list (default: beside --philly)")
      ->check(CLI::ExistingFile);
  h->add_option("--genai-memory", o.owner.genai_memory,
                "Its pod_gpu_memory_used_bytes CSV: memory held marks an owner process")
      ->check(CLI::ExistingFile);
  h->add_option("--queue-itp", o.queue.itp,
                "An ITP job CSV as the queue (default: the synthetic generator)")
      ->check(CLI::ExistingFile);
  h->add_option("--load", o.queue.load,
                "Synthetic queue: GPU-hours asked, as a share of the owner's idle GPU-hours")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  h->add_option("--checkpoint-s", o.checkpoint_s,
                "Jobs save their state every this many seconds (0: the runs with checkpoints "
                "are left out)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{86400 * 365}));
  h->add_option("--vacate-s", o.vacate_s,
                "Seconds a signalled job takes to save and leave; the owner waits meanwhile")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{86400}));
  h->add_option("--gpus-per-node", o.owner.gpus_per_node,
                "GPUs per node where the trace does not say (GenAI pods, Helios VCs)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  h->add_option("--seed", o.queue.seed, "Seed of the synthetic queue")->capture_default_str();
  h->add_option("--price-gpu", o.price_gpu,
                "Price the GPU-hours as this model (on-prem defaults and the price catalog; "
                "docs/cost.md)")
      ->capture_default_str();
  h->add_option("--gpu-memory-gib", o.gpu_memory_gib,
                "Memory of each of the trace's GPUs, for co-location beside holders")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 4096.0));
  h->add_option("--colocate-margin", o.colocate_margin,
                "Kept free above a holder's learned peak, as a share of the GPU's memory")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  h->add_option("--colocate-min-history-s", o.colocate_min_history_s,
                "Seconds of a holder's history needed before anything is lent beside it")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{86400 * 365}));
  h->add_option("--park-idle-s", o.park_idle_s,
                "Park runs: a holder held idle this long is told it will be parked")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{86400 * 365}));
  h->add_option("--park-notice-s", o.park_notice_s,
                "Park runs: seconds between the notice and the park")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{86400 * 365}));
  h->add_option("--restore-gb-per-s", o.restore_gb_per_s,
                "Park runs: how fast a parked holder's memory is copied back (GB/s)")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 10000.0));
  h->add_option("--runtimes", o.runtimes,
                "What placement knows of job lengths, to put long jobs where the quiet is "
                "expected to last: none (packing alone), history (the p80 of the user's finished "
                "jobs, as the daemon learns it) or declared (each job's true length, a bound)")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "history", "declared"}));
  h->add_option("--min-expected-quiet-s", o.min_expected_quiet_s,
                "A free quiet GPU whose quiet is expected to last less than this at p80 is not "
                "lent ([idle] min_expected_quiet_s; 0: lend whatever the forecast)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{86400 * 7}));
  h->add_option("--out", o.out_dir, "Directory for the outputs (created if missing)")->required();
  h->add_flag("--skip-bad-rows", o.skip_bad_rows,
              "Skip and count malformed rows instead of stopping at the first");
  return h;
}

int RunSimHarvest(const SimHarvestOptions& o, std::ostream& out, std::ostream& err) {
  const auto start = std::chrono::steady_clock::now();
  sim::OwnerTraceFiles owner_files = o.owner;
  owner_files.skip_bad_rows = o.skip_bad_rows;
  auto owner = sim::LoadOwnerWorkload(owner_files);
  for (const std::string& m : owner.ok() ? owner->skipped : std::vector<std::string>{}) {
    err << "gleaner: skipped " << m << "\n";
  }
  if (!owner.ok()) {
    err << "gleaner: " << owner.status().message() << "\n";
    return owner.status().code() == core::StatusCode::kInvalidArgument ? kExitBadInput
                                                                       : kExitFailure;
  }
  // Money: the traces' GPUs priced as --price-gpu.
  auto catalog = cost::Catalog::Parse(cost::BuiltinCatalogCsv(), cost::kBuiltinCatalogName);
  if (!catalog.ok()) {
    err << "gleaner: " << catalog.status().message() << "\n";
    return kExitFailure;
  }
  auto prices = sim::PriceHarvestGpus(o.price_gpu, *catalog);
  if (!prices.ok()) {
    err << "gleaner: --price-gpu " << o.price_gpu << ": " << prices.status().message() << "\n";
    return kExitUsage;
  }
  sim::HarvestConfig config;
  config.checkpoint_s = o.checkpoint_s;
  config.vacate_s = o.vacate_s;
  config.gpu_memory = core::Bytes(static_cast<uint64_t>(o.gpu_memory_gib * 0x1p30));
  config.colocation.margin_share = o.colocate_margin;
  config.colocation.min_history = core::Seconds(o.colocate_min_history_s);
  config.park_idle_s = o.park_idle_s;
  config.park_notice_s = o.park_notice_s;
  config.restore_bytes_per_s = o.restore_gb_per_s * 1e9;
  config.idle.min_expected_quiet = core::Seconds(o.min_expected_quiet_s);
  config.runtimes = sim::ParseRuntimeKnowledge(o.runtimes).value_or(config.runtimes);
  const int64_t idle_gpu_s =
      sim::QuietGpuSeconds(owner->timeline, config.idle.busy_utilization_pct);
  sim::HarvestQueueSource queue_source = o.queue;
  queue_source.skip_bad_rows = o.skip_bad_rows;
  auto queue = sim::LoadHarvestQueue(queue_source, owner->timeline, static_cast<double>(idle_gpu_s),
                                     config.gpu_memory);
  for (const std::string& m : queue.ok() ? queue->skipped : std::vector<std::string>{}) {
    err << "gleaner: skipped " << m << "\n";
  }
  if (!queue.ok()) {
    err << "gleaner: " << queue.status().message() << "\n";
    return kExitBadInput;
  }
  // Co-location and parking need the owners' memory: only GenAI with its
  // memory file shows it.
  const bool held_runs = !o.owner.genai.empty() && !o.owner.genai_memory.empty();
  auto runs = sim::RunHarvestBaselines(owner->timeline, queue->jobs, config, held_runs);
  if (!runs.ok()) {
    err << "gleaner: " << runs.status().message() << "\n";
    return kExitFailure;
  }

  nlohmann::ordered_json m;
  const sim::OwnerTimeline& t = owner->timeline;
  m["owner"] = {{"kind", owner->kind},
                {"trace", owner->trace},
                {"gpus", t.gpu_count()},
                {"nodes", t.node_gpus.size()},
                {"start_s", t.start_s},
                {"end_s", t.end_s},
                {"skipped_rows", owner->skipped_rows}};
  m["queue"] = {
      {"source", queue->source},
      {"seed", o.queue.seed},
      {"load", queue->source == "synthetic" ? nlohmann::ordered_json(o.queue.load) : nullptr},
      {"jobs", queue->jobs.size()},
      {"offered_gpu_hours", queue->offered_gpu_hours},
      {"left_out_larger_than_a_node", queue->too_large},
      {"left_out_after_the_end", queue->too_late}};
  m["settings"] = {{"checkpoint_s", config.checkpoint_s},
                   {"vacate_s", config.vacate_s},
                   {"busy_utilization_pct", config.idle.busy_utilization_pct},
                   {"idle_after_s", core::ToSecondsDouble(config.idle.idle_after)},
                   {"heartbeat_s", config.heartbeat_s},
                   {"watch_s", config.watch_s},
                   {"gpu_memory_gib", config.gpu_memory.ToGiB()},
                   {"colocate_margin", config.colocation.margin_share},
                   {"colocate_min_history_s", core::ToSecondsDouble(config.colocation.min_history)},
                   {"colocate_peak_window_s", core::ToSecondsDouble(config.colocation.peak_window)},
                   {"park_idle_s", config.park_idle_s},
                   {"park_notice_s", config.park_notice_s},
                   {"restore_bytes_per_s", config.restore_bytes_per_s},
                   {"runtimes", std::string(sim::RuntimeKnowledgeName(config.runtimes))},
                   {"min_expected_quiet_s", core::ToSecondsDouble(config.idle.min_expected_quiet)}};
  const sim::HarvestLimit limit = sim::LimitOf(runs->front().result);
  m["physical_limit"] = {{"idle_gpu_hours", limit.idle_gpu_hours},
                         {"held_idle_gpu_hours", limit.held_idle_gpu_hours},
                         {"owner_busy_gpu_hours", limit.owner_busy_gpu_hours},
                         {"no_data_gpu_hours", limit.no_data_gpu_hours}};
  m["runs"] = nlohmann::ordered_json::array();
  for (const sim::HarvestBaselineRun& r : *runs)
    m["runs"].push_back(sim::HarvestMetricsJson(r.metrics));
  const sim::HarvestMoney money = sim::MoneyOf(*prices, *runs);
  m["money"] = {{"currency", "USD"},
                {"gpu_model", prices->gpu_model},
                {"owned_per_gpu_hour", *prices->owned_per_gpu_hour},
                {"marginal_per_gpu_hour", *prices->marginal_per_gpu_hour},
                {"cloud_on_demand_per_gpu_hour", *prices->cloud_per_gpu_hour},
                {"cloud_offer", prices->cloud_offer},
                {"cloud_source", prices->cloud_source},
                {"cloud_date", prices->cloud_date},
                {"idle_cost", money.idle_cost}};
  for (size_t i = 0; i < money.runs.size(); ++i) {
    m["runs"][i]["cloud_value"] = money.runs[i].cloud_value;
    m["runs"][i]["energy_cost"] = money.runs[i].energy_cost;
    m["runs"][i]["net_savings"] = money.runs[i].net_savings;
  }
  sim::HarvestScenarioInfo info;
  info.prices = *prices;
  info.money = money;
  info.owner_trace = owner->trace;
  info.queue_source = queue->source;
  info.seed = o.queue.seed;
  info.checkpoint_s = config.checkpoint_s;
  info.vacate_s = config.vacate_s;
  info.offered_gpu_hours = queue->offered_gpu_hours;
  const std::string report = sim::RenderHarvestReport(info, t, queue->jobs, *runs);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::ordered_json timing;
  timing["wall_s"] = wall_s;
  timing["peak_rss_bytes"] = PeakRssBytes();
  // Each baseline's replay alone: jobs/s per run, the figure that compares
  // across traces and commands.
  timing["runs"] = nlohmann::ordered_json::array();
  for (const sim::HarvestBaselineRun& r : *runs) {
    timing["runs"].push_back(
        {{"policy", r.metrics.policy},
         {"checkpoints", r.checkpoints},
         {"wall_s", r.wall_s},
         {"jobs_per_s", r.wall_s > 0 ? static_cast<double>(queue->jobs.size()) / r.wall_s : 0.0}});
  }

  if (!WriteSimOutputs(o.out_dir, {m.dump(2) + "\n", timing.dump(2) + "\n", report}, err))
    return kExitFailure;
  char line[300];
  std::snprintf(line, sizeof line,
                "gleaner sim harvest: %s, %d GPUs, %.0f idle GPU-hours; queue %s, %zu jobs\n",
                owner->trace.c_str(), t.gpu_count(), limit.idle_gpu_hours, queue->source.c_str(),
                queue->jobs.size());
  out << line;
  for (const sim::HarvestBaselineRun& r : *runs) {
    std::snprintf(line, sizeof line,
                  "  %-8s %-16s harvested %8.1f GPU-h (%8.1f while idle: %5.1f %% of idle), lost "
                  "%7.1f, owner returns %6lld, jobs finished %lld\n",
                  r.metrics.policy.c_str(), r.checkpoints ? "checkpoints" : "no checkpoints",
                  r.metrics.harvested_gpu_hours, r.metrics.harvested_idle_gpu_hours,
                  100 * r.metrics.harvested_share_of_idle, r.metrics.lost_gpu_hours,
                  static_cast<long long>(r.metrics.owner_returns),
                  static_cast<long long>(r.metrics.jobs_finished));
    out << line;
    if (r.policy == sim::HarvestPolicy::kColocate || r.policy == sim::HarvestPolicy::kPark) {
      std::snprintf(line, sizeof line,
                    "  %-25s beside holders %7.1f GPU-h, parked %7.1f GPU-h, holder-OOM risk "
                    "%lld min, parks %lld, restores %lld (mean wait %.0f s)\n",
                    "", r.metrics.shared_gpu_hours, r.metrics.parked_gpu_hours,
                    static_cast<long long>(r.metrics.holder_oom_risk_minutes),
                    static_cast<long long>(r.metrics.parks),
                    static_cast<long long>(r.metrics.restores), r.metrics.restore_wait_mean_s);
      out << line;
    }
  }
  std::snprintf(line, sizeof line, "%.2f s wall; wrote %s, timing.json, report.html\n", wall_s,
                (std::filesystem::path(o.out_dir) / "metrics.json").string().c_str());
  out << line;
  return kExitOk;
}

}  // namespace gleaner::cli
