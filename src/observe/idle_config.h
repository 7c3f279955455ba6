#pragma once

#include <string>
#include <vector>

#include "core/ids.h"
#include "core/units.h"

namespace gleaner::observe {

// Everything the idle classifier can be told. Defaults are what a shared
// GPU server wants out of the box; docs/idle-verdicts.md explains each.
struct IdleConfig {
  // A GPU at or above this utilization is busy.
  double busy_utilization_pct = 10;
  // Quiet this long (and no processes) before a GPU can be Idle while its
  // history is thin; with processes holding memory, before it is HeldIdle.
  core::Duration idle_after = core::Seconds(300);
  core::Duration held_idle_after = core::Seconds(300);
  // Once at least `trusted_pauses` similar pauses have been seen, the
  // learned model may call a GPU idle after this much quiet instead.
  core::Duration idle_after_with_history = core::Seconds(120);
  int64_t trusted_pauses = 30;
  // "Idle" promises the GPU stays quiet at least this long; the learned
  // model estimates how likely that is from pauses seen before.
  core::Duration horizon = core::Seconds(600);
  // The least estimated chance of staying quiet for `horizon` that still
  // gets an Idle verdict. Lower lends more GPUs and takes back more often.
  double min_confidence = 0.35;
  // A free idle GPU whose quiet is expected to last less than this at 80 %
  // (its forecast, observe::IdleWindowForecast) is not lent: a job there
  // would mostly be thrown off. Zero: lend whatever the forecast.
  core::Duration min_expected_quiet = core::Seconds(900);
  // Samples further apart than this are a gap: timers restart, and the gap
  // never counts as idle time.
  core::Duration max_sample_gap = core::Seconds(30);
  // A restarted daemon resumes from the minutes it stored if they end no
  // longer than this before it samples again (a restart, or a kill and the
  // open minute it lost); after a longer stop it watches afresh.
  core::Duration max_restart_gap = core::Seconds(150);
  // Power this far above the GPU's idle baseline counts as activity even at
  // low utilization (copies, data loading), as a share of the power limit.
  double power_activity_share = 0.15;
  int32_t max_temperature_c = 90;
  // Never lent, whatever they show: GPUs by UUID, processes by user name or
  // by a substring of their command line.
  std::vector<core::GpuUuid> protected_gpus;
  std::vector<std::string> protected_users;
  std::vector<std::string> protected_commands;
  // Held for their owners (the scheduler's reservations land here).
  std::vector<core::GpuUuid> reserved_gpus;
};

}  // namespace gleaner::observe
