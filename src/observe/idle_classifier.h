#pragma once

#include <deque>
#include <map>
#include <unordered_map>
#include <vector>

#include "observe/gpu_sample.h"
#include "observe/idle_config.h"
#include "observe/idle_window_forecast.h"
#include "observe/minute_rollup.h"
#include "observe/quiet_spell_model.h"
#include "observe/verdict.h"

namespace gleaner::observe {

// Judges, sample by sample, which GPUs are idle, with the evidence. One
// classifier watches a set of GPUs (a host); what it learns about pauses is
// shared among them. Pure: no clock (time is each sample's `at`), no I/O, no
// threads; the same samples always give the same verdicts.
//
// Rules, first match wins:
//   Unhealthy  lost, not attachable, or above max_temperature_c
//   Protected  a protected GPU, or a process of a protected user or command
//   Shared     a gleaner job runs beside the quiet holder it was lent
//              beside (the holder judged by its own utilization); Busy
//              when the holder computes or outgrows the loan's peak
//   Harvested  a gleaner job runs on it
//   Reserved   a reserved GPU
//   Unknown    no continuous data yet (the start, or after a gap)
//   Busy       utilization at or above the threshold, power well above the
//              GPU's baseline, or a new process: at once
//   HeldIdle   processes hold memory, quiet for held_idle_after
//   Idle       no processes, quiet for idle_after, and pauses like this one
//              stayed quiet for the horizon often enough (min_confidence)
//   Busy       otherwise (a pause, not yet idle)
class IdleClassifier {
 public:
  explicit IdleClassifier(IdleConfig config) : config_(std::move(config)) {}
  // Trackers point into verdicts_: moved with it, never copied.
  IdleClassifier(const IdleClassifier&) = delete;
  IdleClassifier& operator=(const IdleClassifier&) = delete;
  IdleClassifier(IdleClassifier&&) = default;
  IdleClassifier& operator=(IdleClassifier&&) = default;

  // Judges one sample. Samples of a GPU must come in time order: one at or
  // before the GPU's previous sample is ignored (counted in
  // ignored_samples()) and the previous verdict is returned. The verdict
  // lives as long as the classifier; the next sample of its GPU changes it.
  const Verdict& Observe(const GpuSample& sample);

  // Resumes a GPU from the minutes a previous run stored, oldest first (an
  // hour is all it uses), as though it had been watched through them: a
  // restarted daemon judges from its history instead of watching for
  // idle_after again. Only the unbroken run of minutes at the end counts,
  // and only if it ends within max_restart_gap of `now`; the next sample
  // continues it across that gap. A minute's activity is its peak
  // utilization and any process new in it; minutes where only gleaner's
  // jobs ran are not the owner's. A GPU already sampled keeps what it has.
  // Returns how much history it resumed from: zero when none counted.
  core::Duration Resume(const core::GpuUuid& uuid, const std::vector<MinuteRollup>& minutes,
                        core::TimePoint now);

  // The latest verdict of every GPU seen, by UUID.
  const std::map<core::GpuUuid, Verdict>& verdicts() const { return verdicts_; }
  const IdleConfig& config() const { return config_; }
  // New rules from the next sample on; what was seen of each GPU (its
  // quiet time, its pauses) is kept and judged by them.
  void Reconfigure(IdleConfig config) { config_ = std::move(config); }
  const QuietSpellModel& model() const { return model_; }
  // What a previous run learned about pauses (model().cells()), kept.
  void RestoreModel(const QuietSpellModel& model) { model_ = model; }
  // How much longer a GPU's quiet goes on (IdleWindowForecast), from the
  // spells that ended (the GPU busy again after quiet); nullopt for a GPU
  // not quiet now or with too little history.
  // Asked, not part of every verdict: a replay of millions of samples
  // does not pay for it.
  std::optional<QuietForecast> ForecastQuiet(const core::GpuUuid& uuid) const;
  // Spells a previous run saw end (QuietSpellsIn its stored minutes).
  void LearnSpells(const core::GpuUuid& uuid, const std::vector<core::Duration>& spells) {
    for (core::Duration d : spells) forecast_.AddSpell(uuid, d);
  }
  int64_t ignored_samples() const { return ignored_samples_; }

 private:
  // A quiet moment waiting to learn whether it stayed quiet for the horizon.
  struct Pending {
    core::TimePoint at;
    QuietSpellModel::Features features;
    bool new_pause = true;  // its spell's first moment in its bucket
  };
  struct Tracker {
    bool seen = false;
    bool resumed = false;  // from stored minutes; the next sample continues them
    core::TimePoint last_at;
    core::TimePoint observed_since;  // start of continuous data
    core::TimePoint last_busy;       // utilization >= threshold (or other activity)
    bool busy_seen = false;          // last_busy was activity, not the start of data
    core::TimePoint last_active;     // utilization > 0
    std::deque<std::pair<core::TimePoint, core::Duration>> active_spans;  // last hour
    std::deque<std::pair<core::TimePoint, double>> utilization;           // the window's samples
    std::vector<uint32_t> pids;
    std::optional<double> idle_power_w;
    std::deque<Pending> pending;
    std::optional<size_t> spell_cell;  // the bucket of this spell's last quiet moment
    Verdict* verdict = nullptr;        // its entry in verdicts_
  };

  void Restart(Tracker& t, core::TimePoint at);
  void Resolve(Tracker& t, core::TimePoint at, bool busy_now);
  GpuState Decide(const GpuSample& s, Tracker& t, bool beside, bool busy_now, bool new_process,
                  Evidence& e);
  // A lent GPU whose job runs beside the holder it was lent beside: Shared
  // while the holder stays quiet and within the peak the loan was sized on.
  GpuState DecideBesideHolder(const GpuSample& s, bool busy_now, const std::string& lent_to,
                              Evidence& e) const;

  IdleConfig config_;
  QuietSpellModel model_;
  IdleWindowForecast forecast_;
  std::unordered_map<core::GpuUuid, Tracker> trackers_;
  std::map<core::GpuUuid, Verdict> verdicts_;  // nodes stay put: trackers point to them
  int64_t ignored_samples_ = 0;
};

}  // namespace gleaner::observe
