#include "observe/minute_rollup.h"

#include <algorithm>

namespace gleaner::observe {
namespace {

bool CountsAsBusy(GpuState s) {
  return s == GpuState::kBusy || s == GpuState::kHeldIdle || s == GpuState::kHarvested ||
         s == GpuState::kShared || s == GpuState::kProtected || s == GpuState::kReserved;
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

static void Credit(MinuteRollup& r, GpuState state, core::Duration d) {
  if (d <= core::Duration{}) return;
  r.observed += d;
  if (CountsAsBusy(state)) r.busy += d;
  if (state == GpuState::kIdle) r.idle += d;
  if (state == GpuState::kHeldIdle) r.held_idle += d;
  // A shared GPU's held memory was put to work: harvested, not held idle.
  if (state == GpuState::kHarvested || state == GpuState::kShared) r.harvested += d;
}

std::vector<MinuteRollup> MinuteRollupBuilder::Add(const GpuSample& s, const Verdict& v) {
  std::vector<MinuteRollup> done;
  const core::TimePoint minute = MinuteOf(s.at);
  Open& o = open_[s.uuid];
  // The time since the previous sample is credited to the state the GPU
  // was in, split at minute boundaries; a gap is nobody's time.
  const bool continuous = o.last_at && s.at - *o.last_at <= max_gap_;
  if (!o.rollup.uuid.empty() && o.rollup.minute != minute) {
    if (continuous) {
      const core::TimePoint end = std::min(o.rollup.minute + core::Seconds(60), s.at);
      Credit(o.rollup, o.last_state, end - *o.last_at);
    }
    if (o.rollup.samples > 0 || o.rollup.observed > core::Duration{}) done.push_back(Finish(o));
    o.rollup = MinuteRollup{};
    o.utilization_sum = o.power_sum = 0;
    o.power_samples = 0;
    if (continuous) Credit(o.rollup, o.last_state, s.at - std::max(*o.last_at, minute));
  } else if (continuous) {
    Credit(o.rollup, o.last_state, s.at - *o.last_at);
  }
  MinuteRollup& r = o.rollup;
  r.uuid = s.uuid;
  r.minute = minute;
  o.last_at = s.at;
  o.last_state = v.state;
  // The job lent the GPU is named whether or not its process shows there
  // yet (one loading its data has opened no CUDA context).
  if (!s.lent_to_user.empty()) r.job_users.insert(s.lent_to_user);
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
    if (!p.user.empty()) (p.gleaner_job ? r.job_users : r.users).insert(p.user);
  }
  return done;
}

MinuteRollup MergeRollups(const MinuteRollup& a, const MinuteRollup& b) {
  if (a.samples == 0) return b;
  if (b.samples == 0) return a;
  MinuteRollup m = b;
  const double na = a.samples, nb = b.samples;
  m.samples = a.samples + b.samples;
  m.utilization_min_pct = std::min(a.utilization_min_pct, b.utilization_min_pct);
  m.utilization_max_pct = std::max(a.utilization_max_pct, b.utilization_max_pct);
  m.utilization_mean_pct = (a.utilization_mean_pct * na + b.utilization_mean_pct * nb) / (na + nb);
  if (a.memory_used_max) {
    m.memory_used_max =
        b.memory_used_max ? std::max(*a.memory_used_max, *b.memory_used_max) : *a.memory_used_max;
  }
  if (a.power_mean_w && b.power_mean_w) {
    m.power_mean_w = (*a.power_mean_w * na + *b.power_mean_w * nb) / (na + nb);
  } else if (a.power_mean_w) {
    m.power_mean_w = a.power_mean_w;
  }
  m.pids.insert(a.pids.begin(), a.pids.end());
  m.users.insert(a.users.begin(), a.users.end());
  m.job_users.insert(a.job_users.begin(), a.job_users.end());
  m.observed = a.observed + b.observed;
  m.busy = a.busy + b.busy;
  m.idle = a.idle + b.idle;
  m.held_idle = a.held_idle + b.held_idle;
  m.harvested = a.harvested + b.harvested;
  return m;
}

std::vector<MinuteRollup> MinuteRollupBuilder::Flush() {
  std::vector<MinuteRollup> done;
  for (auto& [uuid, open] : open_) {
    if (open.rollup.samples > 0 || open.rollup.observed > core::Duration{}) {
      done.push_back(Finish(open));
    }
  }
  open_.clear();
  return done;
}

}  // namespace gleaner::observe
