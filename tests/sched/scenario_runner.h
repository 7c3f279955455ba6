#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "sched/event.h"
#include "sched/scheduler.h"
#include "sched/scheduler_config.h"

namespace gleaner::sched {

// A golden scheduling scenario: a tiny cluster, events at times, and the
// decisions expected after each (docs/scheduler.md describes the format).
struct ScenarioStep {
  core::TimePoint at;
  Event event;
  std::vector<std::string> expect;          // ToString of each action, in order
  std::map<JobId, std::string> pending;     // job -> its exact PendingReason
  std::optional<std::string> expect_error;  // a substring of Handle's error
  std::string where;                        // "steps[3]", for messages
};

struct Scenario {
  std::string description;
  SchedulerConfig config;
  std::string ordering = "multifactor";
  std::string victims = "least-work-lost";
  std::string scorer = "gleaner";
  std::vector<ScenarioStep> steps;  // nodes come first, as NodeAdded at time 0
};

// The JSON forms, shared with the simulator's trace readers. Errors name
// the field and what would be accepted.
core::Result<JobRequest> JobRequestFromJson(const nlohmann::json& j);
// {"id": "host-a", "gpus": 8, "model": "...", "memory_gib": 80,
//  "nvlink_islands": [[0,1,2,3],[4,5,6,7]]}; GPU UUIDs are "GPU-<id>-<index>".
core::Result<NodeSpec> NodeSpecFromJson(const nlohmann::json& j);
core::Result<Scenario> ScenarioFromJson(const nlohmann::json& j);

// The scheduler a scenario asks for; InvalidArgument for unknown policy names.
core::Result<std::unique_ptr<Scheduler>> MakeScenarioScheduler(const Scenario& s);

// Runs the scenario; returns one message per mismatch (empty: it passed).
std::vector<std::string> CheckScenario(const Scenario& s);

// The time scenarios count from: at_s 0.
inline constexpr core::TimePoint kScenarioEpoch =
    core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

}  // namespace gleaner::sched
