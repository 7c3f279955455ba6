#include "observe/alerts.h"

#include <cstdio>

#include "core/enum_names.h"
#include "core/format.h"

namespace gleaner::observe {

constexpr auto kAlertConditionNames = core::MakeEnumNames<AlertCondition>(
    {
        {AlertCondition::kIdle, "idle"},
        {AlertCondition::kHeldIdle, "held_idle"},
        {AlertCondition::kTemperatureAbove, "temperature_above"},
        {AlertCondition::kPowerAbove, "power_above"},
        {AlertCondition::kGpuLost, "lost"},
    },
    "idle");

std::string_view AlertConditionName(AlertCondition c) { return kAlertConditionNames.Name(c); }

bool AlertEvaluator::Holds(const AlertRule& rule, const GpuSample& s, const Verdict& v) const {
  switch (rule.condition) {
    case AlertCondition::kIdle:
      return v.state == GpuState::kIdle;
    case AlertCondition::kHeldIdle:
      return v.state == GpuState::kHeldIdle;
    case AlertCondition::kTemperatureAbove:
      return s.temperature_c && *s.temperature_c > rule.threshold;
    case AlertCondition::kPowerAbove:
      return s.power_w && *s.power_w > rule.threshold;
    case AlertCondition::kGpuLost:
      return !s.healthy;
  }
  return false;
}

std::vector<AlertEvent> AlertEvaluator::Observe(const GpuSample& s, const Verdict& v) {
  std::vector<AlertEvent> events;
  for (const AlertRule& rule : rules_) {
    Episode& e = episodes_[{rule.name, s.uuid}];
    if (!Holds(rule, s, v)) {
      e.condition_since.reset();
      if (e.firing) {
        AlertEvent resolved = *e.firing;
        resolved.firing = false;
        resolved.ends_at = s.at;
        events.push_back(std::move(resolved));
        e.firing.reset();
      }
      continue;
    }
    if (!e.condition_since) e.condition_since = s.at;
    if (e.firing || s.at - *e.condition_since < rule.for_duration) continue;
    AlertEvent event;
    event.rule = rule.name;
    event.uuid = s.uuid;
    event.starts_at = *e.condition_since;
    event.severity = rule.severity;
    for (const ObservedProcess& p : s.processes) {
      if (!p.user.empty()) event.users.push_back(p.user);
    }
    const std::string held_for = core::FormatDuration(s.at - *e.condition_since);
    char number[32] = "";
    switch (rule.condition) {
      case AlertCondition::kIdle:
      case AlertCondition::kHeldIdle:
        event.summary = "GPU " + s.uuid.str() + " " + std::string(GpuStateName(v.state)) + " for " +
                        held_for + ": " + v.evidence.reason;
        break;
      case AlertCondition::kTemperatureAbove:
        std::snprintf(number, sizeof number, "%d°C", *s.temperature_c);
        event.summary = "GPU " + s.uuid.str() + " at " + number + " for " + held_for;
        break;
      case AlertCondition::kPowerAbove:
        std::snprintf(number, sizeof number, "%.0f W", *s.power_w);
        event.summary = "GPU " + s.uuid.str() + " drawing " + number + " for " + held_for;
        break;
      case AlertCondition::kGpuLost:
        event.summary =
            "GPU " + s.uuid.str() + " unhealthy for " + held_for + ": " + s.health_detail;
        break;
    }
    e.firing = event;
    events.push_back(std::move(event));
  }
  return events;
}

std::vector<AlertEvent> AlertEvaluator::Firing() const {
  std::vector<AlertEvent> out;
  for (const auto& [key, e] : episodes_) {
    if (e.firing) out.push_back(*e.firing);
  }
  return out;
}

}  // namespace gleaner::observe
