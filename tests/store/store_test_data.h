#pragma once

// What the store tests store.

#include "observe/minute_rollup.h"

namespace gleaner::store {

inline const core::TimePoint kT0 = core::FromUnixMicros(int64_t{1'764'000'000} * 1'000'000);

// A full minute of GPU `uuid`, `minute` minutes after kT0, every field set.
inline observe::MinuteRollup Rollup(const char* uuid, int minute) {
  observe::MinuteRollup r;
  r.uuid = core::GpuUuid(uuid);
  r.minute = kT0 + core::Seconds(60 * minute);
  r.samples = 60;
  r.utilization_min_pct = 1;
  r.utilization_mean_pct = 40.5;
  r.utilization_max_pct = 99;
  r.memory_used_max = core::Bytes::GiB(12);
  r.power_mean_w = 321.5;
  r.pids = {7, 42};
  r.users = {"alice", "bob"};
  r.state = observe::GpuState::kHeldIdle;
  r.observed = core::Seconds(60);
  r.busy = core::Seconds(45);
  r.idle = core::Seconds(15);
  r.held_idle = core::Seconds(5);
  r.harvested = core::Seconds(10);
  r.job_users = {"carol"};
  return r;
}

}  // namespace gleaner::store
