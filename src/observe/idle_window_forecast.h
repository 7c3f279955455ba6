#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/ids.h"
#include "core/units.h"
#include "observe/minute_rollup.h"

namespace gleaner::observe {

// How much longer a quiet GPU stays quiet: the distribution of its
// remaining quiet time, read off how long its past quiet spells lasted.
// Of the spells that lasted longer than this one has so far, what remained
// of each is a draw from what remains of this one (the empirical survival
// curve, conditioned on the quiet so far). A GPU's own spells are used
// where enough of them lasted this long; else the spells of all the GPUs
// it watches. A GPU whose owner naps for ten minutes and one forgotten
// over the weekend get different answers.
//
// Spells still going on are left out, so the longest spells are missing
// until they end and forecasts err short: on the GenAI trace the p80 is
// exceeded 93 % of the time rather than 80 %. Counting them as lasting at
// least so long (Kaplan and Meier's estimate) fixed that but lost on the
// quantiles' own loss (docs/idle-verdicts.md); for lending, short is the
// safe side. Pure and deterministic; thread-compatible.
class IdleWindowForecast {
 public:
  // Spells per GPU and for all GPUs that are kept (the newest).
  static constexpr size_t kGpuSpells = 512;
  static constexpr size_t kAllSpells = 8192;
  // The fewest ended spells longer than the quiet so far a forecast rests on.
  static constexpr int64_t kMinSpells = 8;

  using Forecast = QuietForecast;

  // A quiet spell of `uuid` ended after `length` (it went busy again).
  void AddSpell(const core::GpuUuid& uuid, core::Duration length);
  // nullopt where fewer than kMinSpells ended spells (its own, or all)
  // lasted longer than `quiet_so_far`.
  std::optional<Forecast> Predict(const core::GpuUuid& uuid, core::Duration quiet_so_far) const;

 private:
  // The newest spells, in order of arrival and sorted by length.
  struct Spells {
    std::deque<core::Duration> arrived;
    std::vector<core::Duration> sorted;
    void Add(core::Duration length, size_t keep);
    // How many lasted longer than `quiet`.
    int64_t LongerThan(core::Duration quiet) const;
  };
  static Forecast Survival(const Spells& ended, core::Duration quiet, bool own);

  std::unordered_map<core::GpuUuid, Spells> gpus_;
  Spells all_;
};

// The quiet spells that ended within stored minutes, for a forecast to
// start from after a restart: runs of quiet minutes between two busy ones
// (peak utilization at or above `busy_pct`, or a new process), gleaner's
// own jobs' minutes not busy, every run broken by a missing minute left
// out. Lengths are whole minutes: the time between the busy minutes. The
// minutes are one GPU's, oldest first.
std::vector<core::Duration> QuietSpellsIn(const std::vector<MinuteRollup>& minutes,
                                          double busy_pct);

}  // namespace gleaner::observe
