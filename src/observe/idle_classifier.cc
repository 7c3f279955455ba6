#include "observe/idle_classifier.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include "core/enum_names.h"
#include "core/format.h"

namespace gleaner::observe {
namespace {

// Fewer quiet spells than this behind a bucket do not hold a quiet GPU
// back: one GPU's one pause that ended soon (Laplace's rule makes it 33 %,
// under min_confidence) is an anecdote, and read as a pattern it called an
// empty GPU busy for the ten minutes after another GPU woke.
constexpr int64_t kPausesToDoubt = 3;

using core::Duration;
using core::FormatDuration;
using core::TimePoint;

constexpr Duration kHour = core::Seconds(3600);

bool Matches(const ObservedProcess& p, const IdleConfig& c, std::string* why) {
  for (const std::string& user : c.protected_users) {
    if (!p.user.empty() && p.user == user) {
      *why = "process " + std::to_string(p.pid) + " of protected user " + user;
      return true;
    }
  }
  for (const std::string& pattern : c.protected_commands) {
    if (!pattern.empty() && p.command.find(pattern) != std::string::npos) {
      *why = "process " + std::to_string(p.pid) + " matches protected command \"" + pattern + "\"";
      return true;
    }
  }
  return false;
}

bool Contains(const std::vector<core::GpuUuid>& list, const core::GpuUuid& uuid) {
  return std::find(list.begin(), list.end(), uuid) != list.end();
}

// A job lent the GPU beside its holder runs with the holder, and with no one
// else: every process gleaner did not start is one the loan was made beside.
bool LentBesideHolder(const GpuSample& s) {
  if (!s.beside_holder || !s.processes_known) return false;
  const std::vector<uint32_t>& holders = s.beside_holder->holder_pids;
  bool holder_seen = false;
  for (const ObservedProcess& p : s.processes) {
    if (p.gleaner_job) continue;
    if (!std::binary_search(holders.begin(), holders.end(), p.pid)) return false;
    holder_seen = true;
  }
  return holder_seen;
}

// The holder's own utilization: the sum of its processes', unknown where
// the driver does not say for one of them.
std::optional<double> HolderUtilization(const GpuSample& s) {
  double sum = 0;
  for (const ObservedProcess& p : s.processes) {
    if (p.gleaner_job) continue;
    if (!p.utilization_pct || !std::isfinite(*p.utilization_pct)) return std::nullopt;
    sum += *p.utilization_pct;
  }
  return std::min(sum, 100.0);
}

std::string Pids(const std::vector<uint32_t>& pids) {
  std::string out;
  for (uint32_t pid : pids) out += (out.empty() ? "" : ",") + std::to_string(pid);
  return out;
}

}  // namespace

constexpr auto kGpuStateNames = core::MakeEnumNames<GpuState>(
    {
        {GpuState::kUnknown, "unknown"},
        {GpuState::kBusy, "busy"},
        {GpuState::kIdle, "idle"},
        {GpuState::kHeldIdle, "held_idle"},
        {GpuState::kProtected, "protected"},
        {GpuState::kReserved, "reserved"},
        {GpuState::kHarvested, "harvested"},
        {GpuState::kShared, "shared"},
        {GpuState::kUnhealthy, "unhealthy"},
    },
    "unknown");

std::string_view GpuStateName(GpuState state) { return kGpuStateNames.Name(state); }

constexpr auto kHolderParkingPhaseNames = core::MakeEnumNames<HolderParking::Phase>(
    {
        {HolderParking::Phase::kNotice, "notice"},
        {HolderParking::Phase::kParking, "parking"},
        {HolderParking::Phase::kParked, "parked"},
        {HolderParking::Phase::kRestoring, "restoring"},
    },
    "notice");

std::string_view ParkingPhaseName(HolderParking::Phase phase) {
  return kHolderParkingPhaseNames.Name(phase);
}

std::optional<HolderParking::Phase> ParseParkingPhase(std::string_view name) {
  for (auto p : {HolderParking::Phase::kNotice, HolderParking::Phase::kParking,
                 HolderParking::Phase::kParked, HolderParking::Phase::kRestoring}) {
    if (ParkingPhaseName(p) == name) return p;
  }
  return std::nullopt;
}

std::optional<GpuState> ParseGpuState(std::string_view name) { return kGpuStateNames.Parse(name); }

void IdleClassifier::Restart(Tracker& t, TimePoint at) {
  // Nothing is known about the time before `at`: timers start over, and
  // quiet moments whose horizon crosses the gap teach nothing.
  t.observed_since = at;
  t.last_busy = at;
  t.busy_seen = false;
  t.last_active = at;
  t.utilization.clear();
  t.pending.clear();
  t.spell_cell.reset();
}

Duration IdleClassifier::Resume(const core::GpuUuid& uuid, const std::vector<MinuteRollup>& minutes,
                                TimePoint now) {
  constexpr Duration kMinute = core::Seconds(60);
  Tracker& t = trackers_[uuid];
  if (t.seen || minutes.empty()) return {};
  // An Unhealthy minute restarted the clock when it was judged, and one
  // without a utilization reading had nothing to judge (a minute's one
  // sample at its very start is judged, though no time is credited to it).
  const auto judged = [](const MinuteRollup& m) {
    return m.samples > 0 && m.state != GpuState::kUnhealthy;
  };
  size_t first = minutes.size() - 1;
  if (!judged(minutes[first])) return {};
  // A minute within the run (neither its first nor its last) must be whole
  // but for gaps too short to count: the first may begin late, the last
  // end early.
  const auto whole = [&](const MinuteRollup& m) {
    return m.observed >= kMinute - config_.max_sample_gap;
  };
  while (first > 0 && judged(minutes[first - 1]) &&
         minutes[first].minute - minutes[first - 1].minute == kMinute &&
         (first + 1 == minutes.size() || whole(minutes[first]))) {
    --first;
  }
  // Time is credited to minutes from their start and up to their end, so
  // a run's last minute ends at minute + observed, and its first starts at
  // the end less observed; a run of one minute could lie anywhere in it,
  // so it is taken to end as early as it could (for the gap) and to start
  // and end as late as it could (for the quiet it shows).
  const MinuteRollup& last = minutes.back();
  const bool one_minute = first + 1 == minutes.size();
  const TimePoint data_end = last.minute + std::min(last.observed, kMinute);
  if (data_end > now || now - data_end > config_.max_restart_gap) return {};
  const TimePoint latest_end = one_minute ? std::min(last.minute + kMinute, now) : data_end;

  t.seen = t.resumed = true;
  t.last_at = data_end;
  t.observed_since = one_minute ? latest_end - last.observed
                                : minutes[first].minute + kMinute - minutes[first].observed;
  t.observed_since = std::max(t.observed_since, latest_end - kHour);
  t.last_busy = t.last_active = t.observed_since;
  const Duration window = std::max(config_.idle_after, config_.held_idle_after);
  const std::set<uint32_t>* previous = nullptr;
  for (size_t i = first; i < minutes.size(); ++i) {
    const MinuteRollup& m = minutes[i];
    const TimePoint end = i + 1 == minutes.size() ? latest_end : m.minute + kMinute;
    // gleaner's own jobs ran and the owner did not come back: their
    // activity was the jobs', not the owner's.
    const bool jobs_only = m.harvested > Duration{} && m.state != GpuState::kBusy;
    bool new_process = false;
    if (previous != nullptr && !jobs_only) {
      for (uint32_t pid : m.pids) new_process = new_process || previous->count(pid) == 0;
    }
    previous = &m.pids;
    if (end <= latest_end - kHour) continue;
    if (!jobs_only && (m.utilization_max_pct >= config_.busy_utilization_pct || new_process)) {
      t.last_busy = end;
      t.busy_seen = true;
    }
    if (!jobs_only && m.utilization_max_pct > 0) {
      t.last_active = end;
      // The share of the minute above 0, had every such sample read the
      // peak: a 1 % poller's minute counts whole, one spike barely.
      t.active_spans.emplace_back(
          end, core::Duration(static_cast<int64_t>(
                   static_cast<double>(m.observed.count()) *
                   std::min(1.0, m.utilization_mean_pct / m.utilization_max_pct))));
    }
    if (end > latest_end - window) t.utilization.emplace_back(end, m.utilization_max_pct);
    if (m.utilization_max_pct == 0 && m.pids.empty() && m.power_mean_w) {
      t.idle_power_w =
          t.idle_power_w ? std::min(*t.idle_power_w, *m.power_mean_w) : *m.power_mean_w;
    }
  }
  t.last_busy = std::max(t.last_busy, t.observed_since);
  t.pids.assign(last.pids.begin(), last.pids.end());
  return latest_end - t.observed_since;
}

std::optional<QuietForecast> IdleClassifier::ForecastQuiet(const core::GpuUuid& uuid) const {
  const auto it = trackers_.find(uuid);
  if (it == trackers_.end() || !it->second.seen || it->second.last_at <= it->second.last_busy) {
    return std::nullopt;
  }
  return forecast_.Predict(uuid, it->second.last_at - it->second.last_busy);
}

void IdleClassifier::Resolve(Tracker& t, TimePoint at, bool busy_now) {
  // Everything older than the horizon saw no activity (activity resolves
  // the queue at once): it stayed quiet.
  while (!t.pending.empty() && t.pending.front().at + config_.horizon < at) {
    model_.Learn(t.pending.front().features, true, t.pending.front().new_pause);
    t.pending.pop_front();
  }
  if (busy_now) {
    for (const Pending& p : t.pending) model_.Learn(p.features, false, p.new_pause);
    t.pending.clear();
    t.spell_cell.reset();  // the spell is over
  }
}

const Verdict& IdleClassifier::Observe(const GpuSample& s) {
  Tracker& t = trackers_[s.uuid];
  if (t.verdict == nullptr) t.verdict = &verdicts_[s.uuid];
  Verdict& v = *t.verdict;
  if (t.seen && !t.resumed && s.at <= t.last_at) {
    ++ignored_samples_;
    return v;
  }
  // The first sample after a resume continues the stored minutes across
  // the restart, unseen: it stands for no time of its own.
  const bool gap =
      !t.seen || s.at - t.last_at > (t.resumed ? config_.max_restart_gap : config_.max_sample_gap);
  const Duration step = gap || t.resumed ? Duration{} : s.at - t.last_at;
  const TimePoint previous_at = t.last_at;
  t.seen = true;
  t.resumed = false;
  t.last_at = s.at;

  Evidence e;
  e.power_w = s.power_w;
  // Beside a holder, the owner's activity is the holder's own: the GPU's
  // utilization and power are mostly the job's.
  const bool beside = LentBesideHolder(s);
  std::optional<double> util = beside ? HolderUtilization(s) : s.utilization_pct;
  if (util && !std::isfinite(*util)) util.reset();  // NaN: no reading
  e.utilization_pct = util;
  for (const ObservedProcess& p : s.processes) e.process_memory = e.process_memory + p.used_memory;
  e.processes = static_cast<int>(s.processes.size());
  for (const ObservedProcess& p : s.processes) e.foreign_processes += p.gleaner_job ? 0 : 1;
  e.lent_to_job = s.lent_to_job;
  e.parking = s.parking;

  GpuState state;
  if (gap) Restart(t, s.at);
  if (!s.healthy || (s.temperature_c && *s.temperature_c > config_.max_temperature_c)) {
    Restart(t, s.at);
    state = GpuState::kUnhealthy;
    e.reason = !s.healthy ? "GPU unhealthy: " + s.health_detail
                          : "temperature " + std::to_string(*s.temperature_c) + "°C above " +
                                std::to_string(config_.max_temperature_c) + "°C";
  } else if (!util) {
    Restart(t, s.at);
    state = GpuState::kUnknown;
    e.reason = beside ? "the holder's own utilization cannot be read beside gleaner's job"
                      : "no utilization reading";
  } else {
    // A process list that could not be read says nothing: keep the last one,
    // or every process would look new when the list comes back.
    bool new_process = false;
    if (s.processes_known) {
      std::vector<uint32_t> pids;
      for (const ObservedProcess& p : s.processes) pids.push_back(p.pid);
      std::sort(pids.begin(), pids.end());
      // gleaner's own job coming is not the owner's activity.
      for (const ObservedProcess& p : s.processes) {
        if (!p.gleaner_job && !std::binary_search(t.pids.begin(), t.pids.end(), p.pid)) {
          new_process = !gap;
        }
      }
      t.pids = std::move(pids);
    }
    // While only gleaner's own job runs, the activity is the job's, not the
    // owner's: the owner's quiet spell goes on, so the GPU can be lent again
    // as soon as the job leaves, and the pause model learns nothing false.
    const bool only_gleaner_jobs =
        s.processes_known && !s.processes.empty() && e.foreign_processes == 0;

    const bool power_high =
        !beside && s.power_w && s.power_limit_w && t.idle_power_w &&
        *s.power_w > *t.idle_power_w + config_.power_activity_share * *s.power_limit_w;
    const bool busy_now =
        !only_gleaner_jobs && (*util >= config_.busy_utilization_pct || power_high || new_process);
    Resolve(t, s.at, busy_now);

    if (busy_now) {
      // A quiet spell between two moments of activity ended: its length
      // is learned (one that began at the start of data is not whole).
      if (t.busy_seen && previous_at > t.last_busy) forecast_.AddSpell(s.uuid, s.at - t.last_busy);
      t.last_busy = s.at;
      t.busy_seen = true;
    }
    if (!only_gleaner_jobs && (*util > 0 || busy_now)) {
      t.last_active = s.at;
      t.active_spans.emplace_back(s.at, step);
    }
    while (!t.active_spans.empty() && t.active_spans.front().first <= s.at - kHour) {
      t.active_spans.pop_front();
    }
    const Duration window = std::max(config_.idle_after, config_.held_idle_after);
    t.utilization.emplace_back(s.at, *util);
    while (t.utilization.size() > 1 && t.utilization.front().first <= s.at - window) {
      t.utilization.pop_front();
    }
    if (*util == 0 && s.processes.empty() && s.power_w) {
      t.idle_power_w = t.idle_power_w ? std::min(*t.idle_power_w, *s.power_w) : *s.power_w;
    }
    e.idle_power_w = t.idle_power_w;
    state = Decide(s, t, beside, busy_now, new_process, e);
    if ((state == GpuState::kHeldIdle || state == GpuState::kIdle) && s.parking &&
        s.parking->phase == HolderParking::Phase::kParking) {
      // Its memory is on its way to host memory (the driver may already
      // list it no more): held until the park is done, or fails and it
      // runs on as before.
      state = GpuState::kHeldIdle;
      e.reason = "process " + std::to_string(s.parking->pid) +
                 (s.parking->user.empty() ? "" : " of " + s.parking->user) + " is being parked (" +
                 core::FormatBytes(s.parking->memory) + " moving to host memory for " +
                 FormatDuration(std::max(s.at - s.parking->at, Duration{})) +
                 "); lent once it is done";
    }
    if (state == GpuState::kHeldIdle && s.parking &&
        s.parking->phase == HolderParking::Phase::kNotice) {
      e.reason += "; to be parked in " +
                  FormatDuration(std::max(s.parking->at - s.at, Duration{})) +
                  " unless it computes or its user runs `gleaner keep " + s.uuid.str() + "`";
    }
  }
  e.quiet_for = s.at - t.last_busy;
  e.observed_for = s.at - t.observed_since;
  for (const auto& [at, u] : t.utilization) {
    e.max_utilization_pct_in_window = std::max(e.max_utilization_pct_in_window, u);
  }

  if (v.uuid.empty() || v.state != state) v.since = s.at;
  v.uuid = s.uuid;
  v.state = state;
  v.at = s.at;
  v.evidence = std::move(e);
  return v;
}

GpuState IdleClassifier::DecideBesideHolder(const GpuSample& s, bool busy_now,
                                            const std::string& lent_to, Evidence& e) const {
  const LoanBesideHolder& loan = *s.beside_holder;
  BesideHolder b;
  b.holder_peak = loan.holder_peak;
  b.declared = b.lendable = loan.declared;
  for (const ObservedProcess& p : s.processes) {
    core::Bytes& sum = p.gleaner_job ? b.borrower_memory : b.holder_memory;
    sum = sum + p.used_memory;
  }
  const std::string holder = "holder " + Pids(loan.holder_pids);
  GpuState state = GpuState::kShared;
  if (busy_now) {
    // (Only its utilization: a new process is not the loan's holder.)
    e.reason = holder + " computes again: " + core::FormatPercent(*e.utilization_pct) + " beside " +
               lent_to;
    state = GpuState::kBusy;
  } else if (b.holder_memory > loan.holder_peak) {
    e.reason = holder + " grew to " + core::FormatBytes(b.holder_memory) + ", past the peak of " +
               core::FormatBytes(loan.holder_peak) + " the loan beside it was sized on";
    state = GpuState::kBusy;
  } else {
    e.reason = lent_to + " uses " + core::FormatBytes(b.borrower_memory) + " of " +
               core::FormatBytes(loan.declared) + " declared beside " + holder + ", quiet at " +
               core::FormatBytes(b.holder_memory);
  }
  e.beside_holder = std::move(b);
  return state;
}

GpuState IdleClassifier::Decide(const GpuSample& s, Tracker& t, bool beside, bool busy_now,
                                bool new_process, Evidence& e) {
  const double util = *e.utilization_pct;
  const Duration quiet = s.at - t.last_busy;
  const Duration observed = s.at - t.observed_since;
  // The words are put together only on the path taken: this runs for
  // every GPU every few seconds, and for every GPU-minute of a replay.
  const auto threshold = [&] { return core::FormatPercent(config_.busy_utilization_pct); };

  std::string why;
  if (Contains(config_.protected_gpus, s.uuid)) {
    e.reason = "GPU is protected";
    return GpuState::kProtected;
  }
  for (const ObservedProcess& p : s.processes) {
    if (Matches(p, config_, &why)) {
      e.reason = why;
      return GpuState::kProtected;
    }
  }
  const ObservedProcess* job = nullptr;
  const ObservedProcess* owner = nullptr;
  for (const ObservedProcess& p : s.processes) {
    (p.gleaner_job ? job : owner) = &p;
  }
  // Lent: a job's process shows on the GPU, or the agent says a job holds it.
  std::string lent_to;
  if (s.lent_to_job) lent_to = "gleaner job " + std::to_string(*s.lent_to_job);
  if (job != nullptr) {
    lent_to =
        (lent_to.empty() ? "gleaner job" : lent_to + "'s") + " process " + std::to_string(job->pid);
  }
  if (s.parking && s.parking->phase == HolderParking::Phase::kRestoring) {
    // Its holder is on its way back: the GPU is emptied for it.
    e.reason = "process " + std::to_string(s.parking->pid) + " is being restored (" +
               s.parking->reason + ")" + (lent_to.empty() ? "" : "; " + lent_to + " leaves first") +
               (s.parking->waiting.empty() ? "" : "; " + s.parking->waiting);
    return GpuState::kBusy;
  }
  if (!lent_to.empty() && beside) return DecideBesideHolder(s, busy_now, lent_to, e);
  if (!lent_to.empty() && owner != nullptr) {
    // The owner came back to a lent GPU: it is theirs again, at once.
    e.reason = "owner returned: process " + std::to_string(owner->pid) +
               (owner->user.empty() ? "" : " of " + owner->user) + " beside " + lent_to;
    return GpuState::kBusy;
  }
  if (!lent_to.empty()) {
    e.reason = job != nullptr ? lent_to + " runs on it" : "lent to " + lent_to;
    return GpuState::kHarvested;
  }
  if (s.parking && s.parking->phase == HolderParking::Phase::kParked && owner == nullptr) {
    // Its holder waits in host memory and wakes only through gleaner, which
    // empties the GPU first: lendable whole, at once.
    e.reason = "process " + std::to_string(s.parking->pid) +
               (s.parking->user.empty() ? "" : " of " + s.parking->user) + " parked for " +
               FormatDuration(s.at - s.parking->at) + " (" + core::FormatBytes(s.parking->memory) +
               " in host memory); lent whole until it wakes";
    return GpuState::kIdle;
  }
  if (Contains(config_.reserved_gpus, s.uuid)) {
    e.reason = "GPU is reserved";
    return GpuState::kReserved;
  }
  if (busy_now) {
    if (util >= config_.busy_utilization_pct) {
      e.reason = "utilization " + core::FormatPercent(util) + " at or above " + threshold();
    } else if (new_process) {
      e.reason = "a new process appeared";
    } else {
      e.reason = "power " + std::to_string(std::lround(*s.power_w)) + " W, well above its idle " +
                 std::to_string(std::lround(*t.idle_power_w)) + " W";
    }
    return GpuState::kBusy;
  }

  const bool held = s.processes_known && !s.processes.empty();
  const char* procs = s.processes_known ? "no processes" : "process list unavailable";
  const auto quiet_text = [&] { return "under " + threshold() + " for " + FormatDuration(quiet); };
  // How much quiet is enough: with processes, the held-idle window; without,
  // the idle window, shortened once pauses like this one have a history.
  std::optional<QuietSpellModel::Estimate> estimate;
  std::optional<QuietSpellModel::Features> features;
  e.window = held ? config_.held_idle_after : config_.idle_after;
  if (!held && quiet >= std::min(config_.idle_after, config_.idle_after_with_history)) {
    Duration active_last_hour{};
    for (const auto& [at, span] : t.active_spans) active_last_hour += span;
    features = QuietSpellModel::Features{s.at - t.last_active, active_last_hour, util == 0};
    estimate = model_.Predict(*features);
    e.confidence = estimate->probability;
    // Spells, not moments: how many a bucket holds does not depend on how
    // often the GPU is read (the daemon each pass, the simulator each minute).
    e.similar_pauses = estimate->pauses;
    if (estimate->pauses >= config_.trusted_pauses) {
      e.window = std::min(e.window, config_.idle_after_with_history);
    }
    // Every quiet moment the model could speak on teaches it, whatever the
    // verdict: this is the population it predicts.
    const size_t cell = QuietSpellModel::Cell(*features);
    t.pending.push_back({s.at, *features, t.spell_cell != cell});
    t.spell_cell = cell;
  }
  if (observed < e.window && quiet >= observed) {
    e.reason = "watching: " + FormatDuration(observed) + " of data, " + FormatDuration(e.window) +
               " needed";
    return GpuState::kUnknown;
  }
  if (quiet < e.window) {
    e.reason =
        quiet_text() + "; " + (held ? "held idle" : "idle") + " after " + FormatDuration(e.window);
    return GpuState::kBusy;
  }
  if (held) {
    e.reason = std::to_string(s.processes.size()) + " process(es) hold " +
               core::FormatBytes(e.process_memory) + " at " + quiet_text();
    return GpuState::kHeldIdle;
  }
  const std::string history =
      estimate->pauses == 0
          ? "no similar pauses seen yet"
          : core::FormatPercent(estimate->probability * 100) + " of " +
                std::to_string(estimate->pauses) + " similar pauses stayed quiet " +
                FormatDuration(config_.horizon) + " more" +
                (estimate->pauses < kPausesToDoubt && estimate->probability < config_.min_confidence
                     ? " (too few to go by)"
                     : "");
  if (estimate->pauses >= kPausesToDoubt && estimate->probability < config_.min_confidence) {
    e.reason = procs + (", " + quiet_text()) + ", but only " + history + " (needs " +
               core::FormatPercent(config_.min_confidence * 100) + ")";
    return GpuState::kBusy;
  }
  e.reason = procs + (", " + quiet_text()) + "; " + history;
  return GpuState::kIdle;
}

}  // namespace gleaner::observe
