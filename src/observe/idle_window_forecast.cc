#include "observe/idle_window_forecast.h"

#include <algorithm>
#include <optional>

namespace gleaner::observe {

void IdleWindowForecast::Spells::Add(core::Duration length, size_t keep) {
  arrived.push_back(length);
  sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), length), length);
  if (arrived.size() > keep) {
    sorted.erase(std::lower_bound(sorted.begin(), sorted.end(), arrived.front()));
    arrived.pop_front();
  }
}

int64_t IdleWindowForecast::Spells::LongerThan(core::Duration quiet) const {
  return static_cast<int64_t>(sorted.end() - std::upper_bound(sorted.begin(), sorted.end(), quiet));
}

void IdleWindowForecast::AddSpell(const core::GpuUuid& uuid, core::Duration length) {
  if (length < core::Duration{}) return;
  gpus_[uuid].Add(length, kGpuSpells);
  all_.Add(length, kAllSpells);
}

IdleWindowForecast::Forecast IdleWindowForecast::Survival(const Spells& ended, core::Duration quiet,
                                                          bool own) {
  Forecast f;
  f.spells = ended.LongerThan(quiet);
  f.own = own;
  // Walk the lengths up: a quantile is where the share of spells lasting
  // past a length falls below its level; as much again stayed quiet with
  // at least that chance.
  const auto first = ended.sorted.end() - f.spells;
  const auto n = static_cast<double>(f.spells);
  std::optional<core::Duration> p80, p50;
  for (auto e = first; e != ended.sorted.end();) {
    const core::Duration t = *e;
    e = std::upper_bound(e, ended.sorted.end(), t);
    const double lasting = static_cast<double>(ended.sorted.end() - e) / n;
    if (!p80 && lasting < 0.8) p80 = t - quiet;
    if (!p50 && lasting < 0.5) p50 = t - quiet;
    if (lasting < 0.2) {
      f.p20 = t - quiet;
      break;
    }
  }
  f.p80 = *p80;
  f.p50 = *p50;
  return f;
}

std::optional<IdleWindowForecast::Forecast> IdleWindowForecast::Predict(
    const core::GpuUuid& uuid, core::Duration quiet_so_far) const {
  // A spell that ended at exactly quiet_so_far is no draw: this one is
  // still quiet there.
  if (auto it = gpus_.find(uuid);
      it != gpus_.end() && it->second.LongerThan(quiet_so_far) >= kMinSpells) {
    return Survival(it->second, quiet_so_far, true);
  }
  if (all_.LongerThan(quiet_so_far) < kMinSpells) return std::nullopt;
  return Survival(all_, quiet_so_far, false);
}

std::vector<core::Duration> QuietSpellsIn(const std::vector<MinuteRollup>& minutes,
                                          double busy_pct) {
  constexpr core::Duration kMinute = core::Seconds(60);
  std::vector<core::Duration> spells;
  std::optional<core::TimePoint> busy_end;  // the end of the last busy minute, in this run
  const MinuteRollup* previous = nullptr;
  for (const MinuteRollup& m : minutes) {
    if (previous == nullptr || m.minute - previous->minute != kMinute) busy_end.reset();
    const bool jobs_only = m.harvested > core::Duration{} && m.state != GpuState::kBusy;
    bool busy = !jobs_only && m.samples > 0 && m.utilization_max_pct >= busy_pct;
    if (!jobs_only && previous != nullptr && m.minute - previous->minute == kMinute) {
      for (uint32_t pid : m.pids) busy = busy || previous->pids.count(pid) == 0;
    }
    if (busy) {
      if (busy_end && m.minute > *busy_end) spells.push_back(m.minute - *busy_end);
      busy_end = m.minute + kMinute;
    }
    previous = &m;
  }
  return spells;
}

}  // namespace gleaner::observe
