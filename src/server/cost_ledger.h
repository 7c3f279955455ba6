#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "core/clock.h"
#include "core/result.h"
#include "cost/accounting.h"
#include "cost/advisor.h"
#include "cost/catalog.h"
#include "cost/cost_settings.h"
#include "store/observation_store.h"

namespace gleaner::server {

// What the store's GPU minutes in [from, to) cost and were worth: each
// minute priced by its GPU's model (the GPUs the store recorded, named for
// the catalog by `settings`).
struct LedgerReport {
  core::TimePoint from, to;
  cost::CostReport report;
  std::map<std::string, store::GpuRecord> gpus;  // by UUID, as recorded
  std::vector<std::string> warnings;             // unpriced models and other caveats
};

core::Result<LedgerReport> BuildLedgerReport(
    store::ObservationStore& store, const cost::Catalog& catalog,
    const cost::CostSettings& settings, const std::map<std::string, std::string>& project_of_user,
    core::TimePoint from, core::TimePoint to);

// The gleaner.cost-report/v1 document (docs/cost.md).
nlohmann::ordered_json LedgerReportToJson(const LedgerReport& ledger);

// The longest span one report covers (three years).
inline constexpr int kMaxReportDays = 1096;

// The span a report covers, at most kMaxReportDays. `since`: a duration back from `now` ("7d",
// "24h"; see cost::ParseHours) or a UTC date "YYYY-MM-DD"; `until`: a UTC
// date (its start) or "" for now. InvalidArgument says what was wrong.
core::Result<std::pair<core::TimePoint, core::TimePoint>> ParseReportSpan(const std::string& since,
                                                                          const std::string& until,
                                                                          core::TimePoint now);

// How much history the in-house forecast learns from: four weeks, each
// hour of the week seen four times.
inline constexpr core::Duration kForecastLookback = core::Seconds(int64_t{28} * 86400);

// What the store's history expects of `gpu_model`'s GPUs for the advisor:
// for each hour of the week, the sum over the GPUs of the model of the
// share of their observed time in that hour that was lendable (idle or
// harvested), from minutes in [now - lookback, now). nullopt when no GPU
// of the model has minutes there.
core::Result<std::optional<cost::IdleForecast>> ForecastIdleGpus(store::ObservationStore& store,
                                                                 const cost::CostSettings& settings,
                                                                 const std::string& gpu_model,
                                                                 core::TimePoint now,
                                                                 core::Duration lookback);

// The model name for GPUs the store has minutes of but no record.
inline constexpr const char* kUnrecordedModel = "(unrecorded)";

}  // namespace gleaner::server
