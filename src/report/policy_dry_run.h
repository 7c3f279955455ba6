#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/config_file.h"
#include "core/result.h"
#include "cost/catalog.h"
#include "cost/gpu_hour_prices.h"
#include "sim/harvest.h"
#include "store/store.h"

namespace gleaner::report {

// The site's own record as a harvest scenario (docs/policy.md#dry-run):
// each GPU's minutes from the store as its owners' timeline (gleaner's jobs
// left out: a minute a job ran without an owner process is quiet), and the
// jobs submitted in the span as the queue, each as long as it ran (or, if
// it never finished, its expected or maximum runtime).
struct SiteScenario {
  sim::OwnerTimeline owner;
  std::vector<sim::HarvestJob> queue;  // sorted by submission
  std::vector<std::string> projects;   // each queued job's
  int64_t minutes = 0;                 // GPU-minutes of history
  int64_t jobs_left_out = 0;           // of unknown length, or larger than a host
  bool synthetic_queue = false;        // none was submitted: a seeded stand-in
};

core::Result<SiteScenario> SiteScenarioFromStore(store::Store& store, core::TimePoint from,
                                                 core::TimePoint to);

// What a policy would do on that history: the harvest simulator, with the
// policy's idle rules and, where they are on, its co-location and parking.
sim::HarvestConfig HarvestConfigOf(const config::GleanerConfig& policy);

// The site's GPUs priced as their most common catalog model (as `policy`'s
// [cost] names and prices them), where every part of the price is known;
// nullopt otherwise.
std::optional<cost::GpuHourPrices> PriceSiteGpus(const std::vector<store::GpuRecord>& gpus,
                                                 const config::GleanerConfig& policy,
                                                 const cost::Catalog& catalog);

// Both policies replayed; the comparison as text, or as JSON. Money where
// the GPUs could be priced.
struct DryRun {
  std::string current_name;
  std::string candidate_name;
  SiteScenario scenario;
  sim::HarvestResult current;
  sim::HarvestResult candidate;
  std::optional<cost::GpuHourPrices> prices;
};
core::Result<DryRun> RunDryRun(store::Store& store, const config::GleanerConfig& current,
                               const config::GleanerConfig& candidate, const cost::Catalog& catalog,
                               core::TimePoint from, core::TimePoint to);
std::string DryRunText(const DryRun& run);
nlohmann::ordered_json DryRunJson(const DryRun& run);

}  // namespace gleaner::report
