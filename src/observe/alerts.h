#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "observe/gpu_sample.h"
#include "observe/verdict.h"

namespace gleaner::observe {

// What an alert rule watches.
enum class AlertCondition {
  kIdle,              // Idle verdict for at least `for_duration`
  kHeldIdle,          // HeldIdle verdict for at least `for_duration`
  kTemperatureAbove,  // temperature above `threshold` °C for `for_duration`
  kPowerAbove,        // power above `threshold` W for `for_duration`
  kGpuLost,           // the GPU is unhealthy (lost, not attachable) for `for_duration`
};

std::string_view AlertConditionName(AlertCondition c);

struct AlertRule {
  std::string name;  // becomes the alert's `alertname`, e.g. "GpuHeldIdle"
  AlertCondition condition = AlertCondition::kIdle;
  core::Duration for_duration{};
  double threshold = 0;
  std::string severity = "warning";
};

// One alert changing state: it starts firing, or it is resolved. Alerts
// are identified by (rule, GPU).
struct AlertEvent {
  std::string rule;
  core::GpuUuid uuid;
  bool firing = true;
  core::TimePoint starts_at;
  core::TimePoint ends_at;  // when resolved; unset while firing
  std::string severity;
  std::string summary;             // one line, with the numbers
  std::vector<std::string> users;  // owners of the GPU's processes, for routing
  std::string job;                 // the job it is about, if any (an approval's)

  bool operator==(const AlertEvent&) const = default;
};

// Turns samples and verdicts into firing and resolved alert events, each
// exactly once per episode: an alert fires when its condition has held for
// the rule's duration and resolves when the condition ends. Pure.
class AlertEvaluator {
 public:
  explicit AlertEvaluator(std::vector<AlertRule> rules) : rules_(std::move(rules)) {}

  std::vector<AlertEvent> Observe(const GpuSample& sample, const Verdict& verdict);

  // Alerts firing now.
  std::vector<AlertEvent> Firing() const;

 private:
  struct Episode {
    std::optional<core::TimePoint> condition_since;
    std::optional<AlertEvent> firing;
  };
  bool Holds(const AlertRule& rule, const GpuSample& s, const Verdict& v) const;

  std::vector<AlertRule> rules_;
  std::map<std::pair<std::string, core::GpuUuid>, Episode> episodes_;
};

}  // namespace gleaner::observe
