#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config_file.h"
#include "core/result.h"
#include "cost/catalog.h"
#include "report/policy_dry_run.h"
#include "server/cost_ledger.h"
#include "sim/harvest_scenario.h"
#include "store/store.h"

namespace gleaner::report {

// What the store says happened to the jobs in [from, to): the moves of its
// history counted, and how long the jobs started there waited.
struct JobActivity {
  int64_t submitted = 0;
  int64_t started = 0;  // first starts of jobs submitted in the span
  int64_t succeeded = 0;
  int64_t failed = 0;
  int64_t cancelled = 0;
  int64_t preempted = 0;      // vacating for another job
  int64_t owner_returns = 0;  // vacating for a GPU's owner
  int64_t sent_away = 0;      // vacating for anything else (a GPU's state, a lost coordinator)
  int64_t requeued = 0;
  int64_t approvals_asked = 0;  // submitted in the span to wait for an approver
  int64_t approved = 0;
  int64_t denied = 0;
  int64_t expired = 0;
  int64_t parked = 0;
  int64_t restored = 0;
  std::optional<double> mean_wait_s;    // submit to first start
  std::optional<double> median_wait_s;  // of the jobs submitted and started in the span
  // "2026-12-01T10:00:00Z applied by root: version 3: why"
  std::vector<std::string> policy_changes;
};
core::Result<JobActivity> JobActivityFromStore(store::Store& store, core::TimePoint from,
                                               core::TimePoint to);

// The periodic report (docs/report.md): what the span cost and what was
// harvested (the cost ledger), what happened to the jobs, and the harvest
// simulator replaying the span's own minutes and jobs under the running
// policy beside the baselines, in the simulator's report style.
struct SiteReport {
  core::TimePoint from, to;
  std::string hosts;  // "gpu-a, gpu-b"
  server::LedgerReport ledger;
  JobActivity jobs;
  std::optional<SiteScenario> scenario;  // unset: too little history to replay
  std::string replay_missing;            // why it is unset
  std::vector<sim::HarvestBaselineRun> runs;
  std::optional<cost::GpuHourPrices> prices;  // the replay's GPUs, where priced whole
};
core::Result<SiteReport> BuildSiteReport(store::Store& store, const config::GleanerConfig& policy,
                                         const cost::Catalog& catalog, core::TimePoint from,
                                         core::TimePoint to);

// One self-contained HTML page: the same report gives the same bytes.
std::string RenderSiteReport(const SiteReport& report);

}  // namespace gleaner::report
