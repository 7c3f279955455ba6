#include "observe/minute_rollup.h"

#include <algorithm>

namespace gleaner::observe {
namespace {

bool CountsAsBusy(GpuState s) {
  return s == GpuState::kBusy || s == GpuState::kHeldIdle || s == GpuState::kHarvested ||
         s == GpuState::kProtected || s == GpuState::kReserved;
}

}  // namespace

core::TimePoint MinuteOf(core::TimePoint t) {
  constexpr int64_t kMinute = 60'000'000;
  const int64_t us = core::ToUnixMicros(t);
  return core::FromUnixMicros(us - ((us % kMinute) + kMinute) % kMinute);
}

MinuteRollup MinuteRollupBuilder::Finish(Open& open) {
  MinuteRollup r = std::move(open.rollup);
  if (r.samples > 0) r.utilization_mean_pct = open.utilization_sum / r.samples;
  if (open.power_samples > 0) r.power_mean_w = open.power_sum / open.power_samples;
  r.state = open.last_state;
  return r;
}

std::vector<MinuteRollup> MinuteRollupBuilder::Add(const GpuSample& s, const Verdict& v) {
  std::vector<MinuteRollup> done;
  const core::TimePoint minute = MinuteOf(s.at);
  auto it = open_.find(s.uuid);
  if (it != open_.end() && it->second.rollup.minute != minute) {
    if (it->second.rollup.samples > 0) done.push_back(Finish(it->second));
    const std::optional<core::TimePoint> last_at = it->second.last_at;
    const GpuState last_state = it->second.last_state;
    open_.erase(it);
    it = open_.emplace(s.uuid, Open{}).first;
    it->second.last_at = last_at;  // the time since it belongs to the new minute
    it->second.last_state = last_state;
  } else if (it == open_.end()) {
    it = open_.emplace(s.uuid, Open{}).first;
  }
  Open& o = it->second;
  MinuteRollup& r = o.rollup;
  r.uuid = s.uuid;
  r.minute = minute;
  // The time since the previous sample is credited with the state it had,
  // unless it is a gap.
  if (o.last_at && s.at - *o.last_at <= max_gap_) {
    const core::Duration step = s.at - std::max(*o.last_at, minute);
    r.observed += step;
    if (CountsAsBusy(o.last_state)) r.busy += step;
    if (o.last_state == GpuState::kIdle) r.idle += step;
  }
  o.last_at = s.at;
  o.last_state = v.state;
  if (!s.utilization_pct) return done;
  const double u = *s.utilization_pct;
  r.utilization_min_pct = r.samples == 0 ? u : std::min(r.utilization_min_pct, u);
  r.utilization_max_pct = r.samples == 0 ? u : std::max(r.utilization_max_pct, u);
  o.utilization_sum += u;
  ++r.samples;
  if (s.memory_used) {
    r.memory_used_max =
        r.memory_used_max ? std::max(*r.memory_used_max, *s.memory_used) : *s.memory_used;
  }
  if (s.power_w) {
    o.power_sum += *s.power_w;
    ++o.power_samples;
  }
  for (const ObservedProcess& p : s.processes) {
    r.pids.insert(p.pid);
    if (!p.user.empty()) r.users.insert(p.user);
  }
  return done;
}

std::vector<MinuteRollup> MinuteRollupBuilder::Flush() {
  std::vector<MinuteRollup> done;
  for (auto& [uuid, open] : open_) {
    if (open.rollup.samples > 0) done.push_back(Finish(open));
  }
  open_.clear();
  return done;
}

}  // namespace gleaner::observe
