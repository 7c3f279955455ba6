#include "cli/slurm_command.h"

#include <ostream>

#include "cli/api_client.h"
#include "cli/daemon_support.h"
#include "cli/exit_codes.h"
#include "config/catalog_files.h"
#include "config/config_file.h"
#include "config/data_dir.h"
#include "core/civil_time.h"
#include "core/format.h"
#include "daemon/daemon_start.h"
#include "daemon/slurm_source.h"
#include "observe/verdict_json.h"
#include "report/policy_dry_run.h"
#include "sim/svg_chart.h"
#include "slurm/jobs_report.h"
#include "views/gpus_json.h"
#include "views/host_view.h"

namespace gleaner::cli {
namespace {

using nlohmann::json;

// What gleaner's own history knows of this host's GPUs: each index's UUID,
// the verdicts a running daemon saved lately, and the minutes since `from`.
struct History {
  std::vector<store::GpuRecord> gpus;
  std::vector<slurm::HostGpu> host_gpus;
  std::map<core::GpuUuid, std::vector<observe::MinuteRollup>> rollups;
};

core::Result<History> ReadHistory(store::Store& store, core::TimePoint from, core::TimePoint now) {
  History h;
  GLEANER_ASSIGN_OR_RETURN(h.gpus, store.Gpus());
  GLEANER_ASSIGN_OR_RETURN(std::vector<observe::Verdict> verdicts, store.LatestVerdicts());
  // The newest GPU at each index: a GPU replaced since keeps its old row.
  std::map<uint32_t, const store::GpuRecord*> by_index;
  for (const store::GpuRecord& g : h.gpus) {
    auto& slot = by_index[g.index];
    if (!slot || g.last_seen > slot->last_seen) slot = &g;
  }
  for (const auto& [index, record] : by_index) {
    slurm::HostGpu g{index, record->uuid, std::nullopt, 0};
    for (const observe::Verdict& v : verdicts) {
      // A daemon saves each verdict at least once a minute: older is stale.
      if (v.uuid == record->uuid && now - v.at <= core::Seconds(90)) g.verdict = v;
    }
    h.host_gpus.push_back(std::move(g));
  }
  GLEANER_ASSIGN_OR_RETURN(std::vector<observe::MinuteRollup> minutes,
                           store.RollupsBetween(from, now));
  for (observe::MinuteRollup& m : minutes) h.rollups[m.uuid].push_back(std::move(m));
  return h;
}

json UsageJson(const slurm::JobUsage& u, std::optional<double> price) {
  json j = {{"allocated_gpu_hours", u.allocated_gpu_hours},
            {"observed_gpu_hours", u.observed_gpu_hours},
            {"used_gpu_hours", u.used_gpu_hours},
            {"idle_gpu_hours", u.idle_gpu_hours},
            {"held_idle_gpu_hours", u.held_idle_gpu_hours}};
  j["unused_cost"] = price ? json(u.UnusedGpuHours() * *price) : json(nullptr);
  return j;
}

std::string Hours(double h) { return core::FormatFixed(h, 1); }

std::string Money(double hours, std::optional<double> price, const std::string& currency) {
  return price ? core::FormatFixed(hours * *price, 2) + " " + currency : "-";
}

std::string GroupTable(const char* title, const std::vector<slurm::UsageGroup>& groups,
                       std::optional<double> price, const std::string& currency) {
  std::string out = std::string("\n") + title + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-16s %5s %9s %8s %8s %8s  %s\n", "", "JOBS", "ALLOC-H",
                "USED-H", "IDLE-H", "HELD-H", "UNUSED COST");
  out += line;
  for (const slurm::UsageGroup& g : groups) {
    std::snprintf(line, sizeof line, "  %-16.16s %5d %9s %8s %8s %8s  %s\n", g.key.c_str(), g.jobs,
                  Hours(g.usage.allocated_gpu_hours).c_str(), Hours(g.usage.used_gpu_hours).c_str(),
                  Hours(g.usage.idle_gpu_hours).c_str(), Hours(g.usage.held_idle_gpu_hours).c_str(),
                  Money(g.usage.UnusedGpuHours(), price, currency).c_str());
    out += line;
  }
  return out;
}

std::string ReportTable(const slurm::JobsReport& r, const std::string& node, core::TimePoint now,
                        std::optional<double> price, const std::string& currency) {
  if (r.jobs.empty()) return "no Slurm job holds a GPU on node " + node + "\n";
  std::string out = "Slurm jobs holding GPUs on node " + node + " (GPU-hours since each started)\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-14s %-12s %-12s %-10s %4s %8s %7s %7s %7s  %-11s %s\n", "JOB",
                "USER", "ACCOUNT", "PARTITION", "GPUS", "ALLOC-H", "USED-H", "IDLE-H", "HELD-H",
                "UNUSED COST", "NOW");
  out += line;
  for (const slurm::JobReportRow& row : r.jobs) {
    const slurm::SlurmJob& j = row.job.job;
    std::string now_text;
    const int unused = row.job.UnusedGpus(now);
    if (unused > 0) {
      now_text =
          std::to_string(unused) + " unused for " + core::FormatDuration(*row.job.UnusedFor(now));
    } else if (std::none_of(row.job.gpus.begin(), row.job.gpus.end(),
                            [](const slurm::AllocatedGpu& g) { return g.verdict.has_value(); })) {
      now_text = "no verdict (is gleaner monitor running?)";
    } else {
      now_text = "all in use";
    }
    std::snprintf(line, sizeof line,
                  "%-14.14s %-12.12s %-12.12s %-10.10s %4zu %8s %7s %7s %7s  %-11s %s\n",
                  j.DisplayId().c_str(), j.user.c_str(), j.account.c_str(), j.partition.c_str(),
                  row.job.gpus.size(), Hours(row.usage.allocated_gpu_hours).c_str(),
                  Hours(row.usage.used_gpu_hours).c_str(), Hours(row.usage.idle_gpu_hours).c_str(),
                  Hours(row.usage.held_idle_gpu_hours).c_str(),
                  Money(row.usage.UnusedGpuHours(), price, currency).c_str(), now_text.c_str());
    out += line;
  }
  out += GroupTable("By user", r.by_user, price, currency);
  out += GroupTable("By account", r.by_account, price, currency);
  return out;
}

}  // namespace

CLI::App* AddSlurmCommand(CLI::App& app, SlurmJobsOptions& o) {
  CLI::App* slurm = app.add_subcommand("slurm", "What Slurm's jobs do with this host's GPUs");
  slurm->require_subcommand(1);
  CLI::App* jobs = slurm->add_subcommand(
      "jobs",
      "The Slurm jobs holding this host's GPUs: GPU-hours allocated, used and unused, and what "
      "the unused ones cost, by job, user and account");
  jobs->add_flag("--json", o.json, "Print the gleaner.slurm-jobs/v1 JSON document");
  jobs->add_option("--config", o.config, "The config file (default: DATA_DIR/gleaner.toml)");
  jobs->add_option("--data-dir", o.data_dir, "Where `gleaner up` or `monitor` keeps its state");
  return slurm;
}

int RunSlurmJobs(const SlurmJobsOptions& o, core::TimePoint now, std::ostream& out,
                 std::ostream& err) {
  const std::string data_dir = config::DataDir(o.data_dir);
  auto config = config::LoadCommandConfig(data_dir, o.config);
  if (!config.ok()) {
    err << "gleaner: " << config.status().message() << "\n";
    return kExitBadInput;
  }
  auto doc = daemon::FetchSlurmJobs(config->slurm);
  if (!doc.ok()) return Fail(err, doc.status());
  for (const std::string& s : doc->skipped) err << "gleaner: Slurm job left out: " << s << "\n";
  const std::string node = daemon::SlurmNodeName(config->slurm);

  core::TimePoint from = now;
  for (const slurm::SlurmJob& j : doc->jobs) {
    if (j.start_time && j.HoldsResources()) from = std::min(from, *j.start_time);
  }
  History history;
  std::optional<double> price;
  std::string currency;
  auto store = daemon::OpenHistory(data_dir);
  if (store.ok()) {
    auto read = ReadHistory(**store, from, now);
    if (!read.ok()) return Fail(err, read.status());
    history = std::move(read).value();
    auto catalog = config::LoadCatalog(config->cost.catalog_files);
    if (catalog.ok()) {
      if (auto prices = report::PriceSiteGpus(history.gpus, *config, *catalog)) {
        price = prices->owned_per_gpu_hour;
        currency = cost::CurrencyName(prices->currency);
      }
    }
  } else {
    // Slurm's view alone still says who holds what.
    err << "gleaner: " << store.status().message() << "; showing Slurm's allocations only\n";
  }
  const slurm::JobsReport report = slurm::BuildJobsReport(
      slurm::JobsOnHost(doc->jobs, node, history.host_gpus), history.rollups, now);
  if (!o.json) {
    out << ReportTable(report, node, now, price, currency);
    return kExitOk;
  }
  json j = {{"schema", "gleaner.slurm-jobs/v1"},
            {"node", node},
            {"taken_at", core::Rfc3339(now)},
            {"slurm_version", doc->slurm_version},
            {"skipped", doc->skipped},
            {"price_per_gpu_hour", price ? json(*price) : json(nullptr)},
            {"currency", currency.empty() ? json(nullptr) : json(currency)},
            {"jobs", json::array()},
            {"by_user", json::array()},
            {"by_account", json::array()},
            {"total", UsageJson(report.total, price)}};
  for (const slurm::JobReportRow& row : report.jobs) {
    json job = views::JobOnHostJson(row.job, now);
    job["usage"] = UsageJson(row.usage, price);
    j["jobs"].push_back(std::move(job));
  }
  for (auto [key, groups] :
       {std::pair{"by_user", &report.by_user}, std::pair{"by_account", &report.by_account}}) {
    for (const slurm::UsageGroup& g : *groups) {
      json row = UsageJson(g.usage, price);
      row["key"] = g.key;
      row["jobs"] = g.jobs;
      j[key].push_back(std::move(row));
    }
  }
  out << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  return kExitOk;
}

}  // namespace gleaner::cli
