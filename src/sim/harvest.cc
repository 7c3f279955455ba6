#include "sim/harvest.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <unordered_map>

#include "core/enum_names.h"
#include "observe/idle_classifier.h"
#include "observe/lending.h"
#include "observe/parking.h"
#include "sched/runtime_history.h"
#include "sched/scheduler.h"
#include "sched/synthetic_cluster.h"
#include "sched/window_fit.h"

namespace gleaner::sim {
namespace {

core::TimePoint At(int64_t s) { return core::FromUnixMicros(0) + core::Seconds(s); }
sched::JobId IdOf(int job) { return static_cast<sched::JobId>(job) + 1; }
int JobOf(sched::JobId id) { return static_cast<int>(id - 1); }

// Process ids the simulated samples show: one owner process per GPU, one
// process per gleaner job.
constexpr uint32_t kOwnerPid = 1'000'000;
constexpr uint32_t kJobPid = 2'000'000;

// Events, ordered by time, then kind (the order work is done in within an
// instant: a job that completes as its vacate ends has finished), then id.
enum class Kind : int { kOwnerChange, kSample, kFinish, kVacated, kTick };
struct Ev {
  int64_t t;
  Kind kind;
  int id;
  int64_t stamp;  // segment index, or the attempt an exit belongs to
  bool operator>(const Ev& o) const {
    if (t != o.t) return t > o.t;
    if (kind != o.kind) return kind > o.kind;
    if (id != o.id) return id > o.id;
    return stamp > o.stamp;
  }
};

enum class Use { kNoData, kOwnerBusy, kQuiet };

struct Gpu {
  core::GpuUuid uuid;
  size_t segment = 0;          // the owner's current segment
  int holder = -1;             // job on it
  bool told_lendable = false;  // what the scheduler was last told
  int64_t next_sample = -1;    // the one sample event that counts
  int64_t since = 0;           // start of the interval being accounted
  // After its last verdict, the quiet seconds the GPU still needs before the
  // classifier could call it idle: when to look again while watching.
  int64_t judge_again_in = 0;
  // Co-location: what the scheduler was told it may lend beside the holder
  // (zero: whole), the holder's peak that was sized on, whether the job on
  // it runs beside the holder, and the holder's history.
  core::Bytes told_lend_memory;
  core::Duration told_quiet_p80{};  // the window told with it (rounded)
  core::Bytes lent_beside_peak;
  bool beside_holder = false;
  observe::HolderPeakWindow holder_peaks{core::Seconds(0)};
  int64_t holder_seen_at = -1;
  // Parking: whether its holder is parked (holding this much), until when
  // it is being restored, and the holder's CPU time as the parking rules
  // read it (the trace has none: a parked holder computes on the CPU while
  // its trace shows it active), as of when.
  bool parked = false;
  int64_t parked_memory = 0;
  int64_t restored_at = -1;
  core::Duration cpu{};
  int64_t cpu_seen_at = -1;
};

// What may be lent on a GPU now: nothing, the whole GPU, or `memory`
// beside its holder.
struct Lend {
  bool lendable = false;
  core::Bytes memory;
};

struct Job {
  enum class Phase { kPending, kRunning, kVacating, kDone } phase = Phase::kPending;
  int64_t remaining_s = 0;
  int64_t attempt_start = 0;
  int64_t attempt = 0;
  std::vector<int> gpus;
};

class HarvestRun {
 public:
  HarvestRun(const OwnerTimeline& owner, const std::vector<HarvestJob>& queue,
             const HarvestConfig& config)
      : owner_(owner),
        queue_(queue),
        config_(config),
        classifier_(ClassifierConfig()),
        parking_(ParkingConfig()) {}

  core::Result<HarvestResult> Run();

 private:
  observe::ParkingConfig ParkingConfig() const {
    observe::ParkingConfig p;
    p.enabled = config_.policy == HarvestPolicy::kPark;
    p.park_idle_timeout = core::Seconds(config_.park_idle_s);
    p.notice = core::Seconds(config_.park_notice_s);
    p.max_park = {};  // the trace's holders come back on their own activity
    return p;
  }
  observe::IdleConfig ClassifierConfig() const {
    observe::IdleConfig c = config_.idle;
    c.max_sample_gap =
        core::Seconds(owner_.from_counts ? 2 * config_.heartbeat_s : 3 * owner_.step_s);
    return c;
  }
  const OwnerSegment& Now(int gpu) const {
    const Gpu& g = gpus_[static_cast<size_t>(gpu)];
    return owner_.gpus[static_cast<size_t>(gpu)][g.segment];
  }
  Use UseOf(int gpu) const {
    const OwnerSegment& s = Now(gpu);
    if (!s.has_data) return Use::kNoData;
    return s.utilization_pct >= config_.idle.busy_utilization_pct ? Use::kOwnerBusy : Use::kQuiet;
  }

  void Account(int gpu, int64_t t);
  void AccountQueue(int64_t t);
  void AddToSlices(int64_t from, int64_t to, double HarvestSlice::*field, double weight);
  bool Colocates() const {
    return config_.policy == HarvestPolicy::kColocate || config_.policy == HarvestPolicy::kPark;
  }
  bool Classifies() const {
    return config_.policy != HarvestPolicy::kNone && config_.policy != HarvestPolicy::kNaive;
  }
  Lend Judge(int gpu, int64_t t);
  Lend JudgeParked(int gpu, int64_t t);
  // The parking rules, as the daemon runs them, on the GPU's verdict now;
  // true when its holder was parked.
  bool Park(int gpu, int64_t t, const observe::Verdict& v);
  std::vector<observe::ParkAction> PlanParking(int gpu, int64_t t, const observe::Verdict& v);
  Lend JudgeBesideHolder(int gpu, int64_t t, const observe::Verdict& holder);
  const observe::Verdict& Observe(int gpu, int64_t t, const OwnerSegment& s);
  void LearnHolder(Gpu& g, int64_t t, const OwnerSegment& s);
  void ScheduleSample(int gpu, int64_t t);
  core::Status Tell(const sched::Event& event, int64_t t);
  // The GPU's expected quiet for placement (zero: none), as the daemon
  // tells it.
  core::Duration QuietWindow(int gpu) const;
  // A free quiet GPU whose quiet is expected to be too short to lend, as
  // the daemon's sampler rules (observe::ShortQuietBlock); it is looked at
  // again after `watch_s`, as the forecast changes with the quiet.
  bool ShortQuiet(int gpu);
  void GuessRuntime(const HarvestJob& h, sched::JobRequest& req) const;
  core::Status Carry(const sched::Action& action, int64_t t);
  void Leave(int job, int64_t t);

  const OwnerTimeline& owner_;
  const std::vector<HarvestJob>& queue_;
  const HarvestConfig& config_;
  observe::IdleClassifier classifier_;
  observe::ParkingPlanner parking_;
  sched::Scheduler scheduler_;
  sched::RuntimeHistory runtimes_;  // finished jobs' lengths (RuntimeKnowledge::kHistory)
  std::vector<Gpu> gpus_;
  std::unordered_map<std::string, int> gpu_by_uuid_;
  std::vector<Job> jobs_;
  std::priority_queue<Ev, std::vector<Ev>, std::greater<>> events_;
  std::vector<int> touched_;  // GPUs to sample this instant
  std::vector<bool> is_touched_;
  std::vector<int> leaving_;  // jobs whose exit is carried out this instant
  int64_t pending_ = 0;
  int64_t pending_since_ = 0;
  bool tick_scheduled_ = false;
  HarvestResult r_;
};

void HarvestRun::AddToSlices(int64_t from, int64_t to, double HarvestSlice::*field, double weight) {
  if (to <= from) return;
  const double width =
      static_cast<double>(owner_.end_s - owner_.start_s) / static_cast<double>(r_.slices.size());
  size_t i = static_cast<size_t>(static_cast<double>(from - owner_.start_s) / width);
  for (; i < r_.slices.size(); ++i) {
    const double lo =
        std::max(static_cast<double>(from - owner_.start_s), width * static_cast<double>(i));
    const double hi =
        std::min(static_cast<double>(to - owner_.start_s), width * static_cast<double>(i + 1));
    if (hi <= lo) break;
    r_.slices[i].*field += (hi - lo) * weight;
  }
}

// Closes the GPU's open interval at `t` under its current use.
void HarvestRun::Account(int gpu, int64_t t) {
  Gpu& g = gpus_[static_cast<size_t>(gpu)];
  const int64_t d = t - g.since;
  if (d <= 0) return;
  const Use use = UseOf(gpu);
  const bool held = g.holder >= 0;
  if (held) {
    r_.harvested_gpu_s += d;
    AddToSlices(g.since, t, &HarvestSlice::harvested, 1);
    if (g.parked) r_.parked_gpu_s += d;
    if (g.beside_holder && !g.parked) {
      r_.shared_gpu_s += d;
      const core::Bytes job = queue_[static_cast<size_t>(g.holder)].gpu_memory;
      if (static_cast<uint64_t>(Now(gpu).memory_bytes) + job.count() > config_.gpu_memory.count()) {
        r_.holder_oom_risk_minutes += (d + 59) / 60;
      }
    }
  }
  switch (use) {
    case Use::kNoData:
      r_.no_data_gpu_s += d;
      break;
    case Use::kOwnerBusy:
      if (held) {
        r_.owner_delay_gpu_s += d;  // the owner is back and waits for the job to leave
      } else {
        // A parked holder waits for its memory to come back.
        const int64_t restoring = std::clamp<int64_t>(g.restored_at - g.since, 0, d);
        r_.owner_delay_gpu_s += restoring;
        r_.owner_busy_gpu_s += d - restoring;
        AddToSlices(g.since + restoring, t, &HarvestSlice::owner_busy, 1);
      }
      break;
    case Use::kQuiet:
      r_.idle_gpu_s += d;
      if (Now(gpu).owner_process) r_.held_idle_gpu_s += d;
      if (held) {
        r_.harvested_idle_gpu_s += d;
      } else {
        AddToSlices(g.since, t, &HarvestSlice::idle_unused, 1);
      }
      break;
  }
  g.since = t;
}

void HarvestRun::AccountQueue(int64_t t) {
  AddToSlices(pending_since_, t, &HarvestSlice::queued, static_cast<double>(pending_));
  pending_since_ = t;
}

// What may be lent on the GPU now (or stay lent), under the policy.
Lend HarvestRun::Judge(int gpu, int64_t t) {
  const OwnerSegment& s = Now(gpu);
  Gpu& g = gpus_[static_cast<size_t>(gpu)];
  if (!s.has_data) {
    g.parked = false;  // the GPU is gone: nothing to restore it to
    parking_.Release(g.uuid);
    return {};
  }
  if (config_.policy == HarvestPolicy::kNaive) {
    return {s.utilization_pct < config_.idle.busy_utilization_pct, {}};
  }
  if (g.parked) return JudgeParked(gpu, t);
  if (t < g.restored_at) return {};               // the holder's state is still being copied back
  if (!s.owner_process) g.beside_holder = false;  // the holder left: the job has it whole
  const observe::Verdict& v = Observe(gpu, t, s);
  if (Park(gpu, t, v)) return {true, {}};
  if (g.holder < 0 && ShortQuiet(gpu)) return {};
  if (!Colocates() || !s.owner_process || (g.holder >= 0 && !g.beside_holder)) {
    return {observe::MayLend(v, g.holder >= 0), {}};
  }
  return JudgeBesideHolder(gpu, t, v);
}

// A GPU whose holder is on it: lent beside it while it stays held idle
// and the job fits, parked once it has been idle long enough.
Lend HarvestRun::JudgeBesideHolder(int gpu, int64_t t, const observe::Verdict& holder) {
  Gpu& g = gpus_[static_cast<size_t>(gpu)];
  const OwnerSegment& s = Now(gpu);
  const core::Bytes held(static_cast<uint64_t>(s.memory_bytes));
  if (holder.state != observe::GpuState::kHeldIdle) return {};
  if (g.holder >= 0) {
    if (observe::SharedClaim(holder, held, g.lent_beside_peak)) return {};
    return {true, g.told_lend_memory};
  }
  const observe::Headroom room = observe::HeadroomBeside(
      config_.gpu_memory, held, g.holder_peaks.At(At(t)), config_.colocation);
  if (room.lendable.count() == 0) return {};
  g.lent_beside_peak = room.holder_peak;
  // Whole GiB, so that a holder's small changes do not move the GPU between
  // the scheduler's classes at every sample.
  return {true, core::Bytes::GiB(room.lendable.count() >> 30)};
}

std::vector<observe::ParkAction> HarvestRun::PlanParking(int gpu, int64_t t,
                                                         const observe::Verdict& v) {
  const Gpu& g = gpus_[static_cast<size_t>(gpu)];
  const OwnerSegment& s = Now(gpu);
  observe::ParkFacts f;
  f.verdict = v;
  f.verdict.uuid = g.uuid;
  if (s.owner_process) {
    f.holders.push_back({kOwnerPid + static_cast<uint32_t>(gpu),
                         "owner",
                         "",
                         core::Bytes(static_cast<uint64_t>(s.memory_bytes)),
                         false,
                         s.utilization_pct,
                         {}});
  }
  // Host memory is not modelled: it always holds what is parked.
  const core::Bytes host = core::Bytes::GiB(int64_t{1} << 20);
  return parking_.Plan(
      {f}, host, host,
      [&](uint32_t) { return s.owner_process ? std::optional(g.cpu) : std::nullopt; }, At(t));
}

bool HarvestRun::Park(int gpu, int64_t t, const observe::Verdict& v) {
  if (config_.policy != HarvestPolicy::kPark) return false;
  Gpu& g = gpus_[static_cast<size_t>(gpu)];
  for (const observe::ParkAction& a : PlanParking(gpu, t, v)) {
    if (a.kind != observe::ParkAction::Kind::kPark) continue;  // told, or a notice lapsed
    g.parked = true;
    g.parked_memory = Now(gpu).memory_bytes;
    g.beside_holder = false;
    g.cpu_seen_at = t;
    parking_.Parked(g.uuid, g.cpu, At(t));
    ++r_.parks;
    return true;
  }
  return false;
}

// A parked holder comes back when its process wakes: in the trace, when it
// computes or its memory changes (a CUDA call). It then waits for the job
// on its GPU to leave and for its memory to be copied back.
Lend HarvestRun::JudgeParked(int gpu, int64_t t) {
  Gpu& g = gpus_[static_cast<size_t>(gpu)];
  const OwnerSegment& s = Now(gpu);
  const bool active =
      s.utilization_pct >= config_.idle.busy_utilization_pct || s.memory_bytes != g.parked_memory;
  if (active) g.cpu += core::Seconds(t - g.cpu_seen_at);  // a whole CPU since it was last seen
  g.cpu_seen_at = t;
  observe::Verdict none;
  for (const observe::ParkAction& a : PlanParking(gpu, t, none)) {
    if (a.kind == observe::ParkAction::Kind::kForget) {
      g.parked = false;  // it exited while parked: nothing to restore
      return {true, {}};
    }
    if (a.kind != observe::ParkAction::Kind::kRestore) continue;
    g.parked = false;
    parking_.Release(g.uuid);
    const int64_t copy_s = static_cast<int64_t>(
        std::ceil(static_cast<double>(g.parked_memory) / config_.restore_bytes_per_s));
    const int64_t wait_s = (g.holder >= 0 ? config_.vacate_s : 0) + copy_s;
    g.restored_at = t + wait_s;
    ++r_.restores;
    r_.restore_wait_s += wait_s;
    return {};  // judged afresh at the samples after the restore
  }
  return {true, {}};
}

// The classifier's verdict on a sample of the GPU at `t` showing `s` and
// the job on it, if any.
const observe::Verdict& HarvestRun::Observe(int gpu, int64_t t, const OwnerSegment& s) {
  Gpu& g = gpus_[static_cast<size_t>(gpu)];
  observe::GpuSample sample;
  sample.at = At(t);
  sample.uuid = g.uuid;
  sample.processes_known = true;
  double util = s.utilization_pct;
  int64_t memory = s.memory_bytes;
  if (s.owner_process) {
    sample.processes.push_back({kOwnerPid + static_cast<uint32_t>(gpu),
                                "owner",
                                "",
                                core::Bytes(static_cast<uint64_t>(memory)),
                                false,
                                util,
                                {}});
  }
  if (Colocates()) LearnHolder(g, t, s);
  // Beside its holder a job is judged apart (per-process readings): the
  // verdict is the holder's.
  if (g.holder >= 0 && !g.beside_holder) {
    // A training job keeps its GPU busy.
    util = 100;
    memory += int64_t{1} << 30;
    sample.processes.push_back(
        {kJobPid + static_cast<uint32_t>(g.holder), "", "", core::Bytes::GiB(1), true, 100.0, {}});
  }
  sample.utilization_pct = util;
  sample.memory_used = core::Bytes(static_cast<uint64_t>(memory));
  ++r_.samples;
  const observe::Verdict& v = classifier_.Observe(sample);
  // The first moment a window could be met: the shorter window (with a
  // trusted history) first, then the verdict's own.
  const core::Duration need = std::min(config_.idle.idle_after_with_history, v.evidence.window);
  const core::Duration have = std::min(v.evidence.quiet_for, v.evidence.observed_for);
  const int64_t us = (need - have).count();
  g.judge_again_in = us > 0 ? (us + 999'999) / 1'000'000 : 0;
  return v;
}

core::Duration HarvestRun::QuietWindow(int gpu) const {
  if (!Classifies() || config_.runtimes == RuntimeKnowledge::kNone) return {};
  const auto forecast = classifier_.ForecastQuiet(gpus_[static_cast<size_t>(gpu)].uuid);
  return forecast ? sched::RoundQuietWindow(forecast->p80) : core::Duration{};
}

bool HarvestRun::ShortQuiet(int gpu) {
  Gpu& g = gpus_[static_cast<size_t>(gpu)];
  const auto forecast = classifier_.ForecastQuiet(g.uuid);
  if (observe::ShortQuietBlock(forecast, config_.idle.min_expected_quiet).empty()) return false;
  if (g.judge_again_in <= 0) g.judge_again_in = config_.watch_s;
  return true;
}

void HarvestRun::GuessRuntime(const HarvestJob& h, sched::JobRequest& req) const {
  switch (config_.runtimes) {
    case RuntimeKnowledge::kNone:
      return;
    case RuntimeKnowledge::kDeclared:
      req.runtime_guess = core::Seconds(h.work_s);
      req.runtime_basis = "declared";
      return;
    case RuntimeKnowledge::kHistory:
      if (auto guess = runtimes_.Predict({h.user, h.user, ""})) {
        req.runtime_guess = guess->p80;
        req.runtime_basis = guess->basis;
      }
      return;
  }
}

// The holder's history is the samples it was seen alone; a new holder
// starts one afresh.
void HarvestRun::LearnHolder(Gpu& g, int64_t t, const OwnerSegment& s) {
  if (!s.owner_process) {
    g.holder_peaks.Reset();
    g.holder_seen_at = -1;
  } else if (g.holder < 0) {
    const int64_t seen =
        g.holder_seen_at < 0 ? 0 : std::min(t - g.holder_seen_at, 3 * owner_.step_s);
    g.holder_peaks.Add(At(t), core::Bytes(static_cast<uint64_t>(s.memory_bytes)),
                       core::Seconds(seen));
    g.holder_seen_at = t;
  } else {
    g.holder_seen_at = -1;
  }
}

// The GPU's next sample, when nothing else will sample it sooner.
void HarvestRun::ScheduleSample(int gpu, int64_t t) {
  Gpu& g = gpus_[static_cast<size_t>(gpu)];
  if (!Classifies() || !Now(gpu).has_data) {
    g.next_sample = -1;
    return;
  }
  const int64_t every = owner_.from_counts ? config_.heartbeat_s : owner_.step_s;
  const bool watching = g.holder < 0 && !g.told_lendable && UseOf(gpu) == Use::kQuiet;
  // Watching, look again when a window could be met, or (met, but the
  // learned model is not yet confident) every `watch_s`.
  const int64_t wait = g.judge_again_in > 0 ? g.judge_again_in : config_.watch_s;
  int64_t next = t + (watching ? std::min(wait, every) : every);
  const auto& segs = owner_.gpus[static_cast<size_t>(gpu)];
  if (g.segment + 1 < segs.size() && segs[g.segment + 1].at_s <= next) {
    g.next_sample = -1;  // the change samples it
    return;
  }
  g.next_sample = next;
  events_.push({next, Kind::kSample, gpu, next});
}

core::Status HarvestRun::Tell(const sched::Event& event, int64_t t) {
  auto actions = scheduler_.Handle(event, At(t));
  if (!actions.ok()) return actions.status();
  for (const sched::Action& a : *actions) GLEANER_RETURN_IF_ERROR(Carry(a, t));
  return core::Status::Ok();
}

core::Status HarvestRun::Carry(const sched::Action& action, int64_t t) {
  if (const auto* start = std::get_if<sched::StartJob>(&action)) {
    const int j = JobOf(start->job);
    Job& job = jobs_[static_cast<size_t>(j)];
    AccountQueue(t);
    --pending_;
    job.phase = Job::Phase::kRunning;
    job.attempt_start = t;
    ++job.attempt;
    job.gpus.clear();
    for (const core::GpuUuid& uuid : start->gpus) {
      const int gpu = gpu_by_uuid_.at(uuid.str());
      Account(gpu, t);
      Gpu& g = gpus_[static_cast<size_t>(gpu)];
      g.holder = j;
      g.beside_holder = g.told_lend_memory.count() > 0;
      job.gpus.push_back(gpu);
    }
    HarvestJobOutcome& out = r_.jobs[static_cast<size_t>(j)];
    if (out.first_start_s < 0) out.first_start_s = t;
    if (config_.record_decisions) {
      std::string line = std::to_string(t) + " start job " + std::to_string(j) + " on gpus";
      for (size_t i = 0; i < job.gpus.size(); ++i) {
        line += (i == 0 ? " " : ",") + std::to_string(job.gpus[i]);
      }
      r_.decisions.push_back(std::move(line));
    }
    events_.push({t + job.remaining_s, Kind::kFinish, j, job.attempt});
    return core::Status::Ok();
  }
  if (const auto* preempt = std::get_if<sched::PreemptJob>(&action)) {
    const int j = JobOf(preempt->job);
    Job& job = jobs_[static_cast<size_t>(j)];
    // A job whose exit is carried out this instant leaves anyway.
    if (job.phase != Job::Phase::kRunning) return core::Status::Ok();
    if (std::find(leaving_.begin(), leaving_.end(), j) != leaving_.end()) return core::Status::Ok();
    job.phase = Job::Phase::kVacating;
    if (config_.record_decisions) {
      r_.decisions.push_back(std::to_string(t) + " vacate job " + std::to_string(j));
    }
    ++r_.preemptions;
    ++r_.jobs[static_cast<size_t>(j)].preemptions;
    events_.push({t + config_.vacate_s, Kind::kVacated, j, job.attempt});
    return core::Status::Ok();
  }
  if (std::holds_alternative<sched::RequeueJob>(action)) {
    AccountQueue(t);
    ++pending_;
    return core::Status::Ok();
  }
  if (const auto* reject = std::get_if<sched::RejectJob>(&action)) {
    AccountQueue(t);
    --pending_;
    jobs_[static_cast<size_t>(JobOf(reject->job))].phase = Job::Phase::kDone;
    r_.jobs[static_cast<size_t>(JobOf(reject->job))].rejected = true;
    return core::Status::Ok();
  }
  return core::FailedPrecondition("the scheduler asked to " + sched::ToString(action) +
                                  ", which a harvest replay cannot carry out (no job is elastic)");
}

// The job gives its GPUs back at `t` (finished, or vacated).
void HarvestRun::Leave(int j, int64_t t) {
  Job& job = jobs_[static_cast<size_t>(j)];
  for (int gpu : job.gpus) {
    Account(gpu, t);
    gpus_[static_cast<size_t>(gpu)].holder = -1;
    gpus_[static_cast<size_t>(gpu)].beside_holder = false;
    if (!is_touched_[static_cast<size_t>(gpu)]) {
      is_touched_[static_cast<size_t>(gpu)] = true;
      touched_.push_back(gpu);
    }
  }
  job.gpus.clear();
}

core::Result<HarvestResult> HarvestRun::Run() {
  r_.slices.resize(static_cast<size_t>(std::max(1, config_.slices)));
  r_.jobs.resize(queue_.size());
  jobs_.resize(queue_.size());
  for (size_t j = 0; j < queue_.size(); ++j) {
    if (j > 0 && queue_[j].submit_s < queue_[j - 1].submit_s) {
      return core::InvalidArgument("the queue must be sorted by submit time");
    }
    jobs_[j].remaining_s = std::max<int64_t>(1, queue_[j].work_s);
  }
  // Nodes and GPUs, none lendable until judged.
  for (size_t n = 0; n < owner_.node_gpus.size(); ++n) {
    const int count = owner_.node_gpus[n];
    for (int i = 0; i < count; ++i) {
      Gpu g;
      g.holder_peaks = observe::HolderPeakWindow(config_.colocation.peak_window);
      g.uuid = sched::SyntheticGpuUuid(static_cast<int>(n), i);
      g.since = owner_.start_s;
      gpu_by_uuid_[g.uuid.str()] = static_cast<int>(gpus_.size());
      gpus_.push_back(g);
    }
    if (config_.policy != HarvestPolicy::kNone) {
      GLEANER_RETURN_IF_ERROR(
          Tell(sched::NodeAdded{sched::SyntheticNode(static_cast<int>(n), count, false)},
               owner_.start_s));
    }
  }
  if (static_cast<int>(gpus_.size()) != owner_.gpu_count()) {
    return core::InvalidArgument("the owner timeline's nodes do not add up to its GPUs");
  }
  is_touched_.assign(gpus_.size(), false);
  for (size_t g = 0; g < gpus_.size(); ++g) {
    const auto& segs = owner_.gpus[g];
    // Segments at or before the start describe the start.
    while (gpus_[g].segment + 1 < segs.size() && segs[gpus_[g].segment + 1].at_s <= owner_.start_s)
      ++gpus_[g].segment;
    touched_.push_back(static_cast<int>(g));
    is_touched_[g] = true;
    if (gpus_[g].segment + 1 < segs.size()) {
      events_.push({segs[gpus_[g].segment + 1].at_s, Kind::kOwnerChange, static_cast<int>(g),
                    static_cast<int64_t>(gpus_[g].segment + 1)});
    }
  }
  pending_since_ = owner_.start_s;
  size_t next_arrival = 0;
  int64_t t = owner_.start_s;
  std::vector<int> finishing, vacated;
  while (true) {
    // Everything due at `t`, in kind order.
    finishing.clear();
    vacated.clear();
    bool tick = false;
    while (!events_.empty() && events_.top().t == t) {
      const Ev e = events_.top();
      events_.pop();
      switch (e.kind) {
        case Kind::kOwnerChange: {
          Gpu& g = gpus_[static_cast<size_t>(e.id)];
          Account(e.id, t);
          // Sampled densely, the classifier would have seen the old state
          // up to the change: show it the last moment of it.
          if (Classifies() && Now(e.id).has_data && !g.parked) {
            Observe(e.id, t - 1, Now(e.id));
          }
          g.segment = static_cast<size_t>(e.stamp);
          const auto& segs = owner_.gpus[static_cast<size_t>(e.id)];
          if (g.segment + 1 < segs.size()) {
            events_.push({segs[g.segment + 1].at_s, Kind::kOwnerChange, e.id, e.stamp + 1});
          }
          if (!is_touched_[static_cast<size_t>(e.id)]) {
            is_touched_[static_cast<size_t>(e.id)] = true;
            touched_.push_back(e.id);
          }
          break;
        }
        case Kind::kSample:
          if (gpus_[static_cast<size_t>(e.id)].next_sample == e.stamp &&
              !is_touched_[static_cast<size_t>(e.id)]) {
            is_touched_[static_cast<size_t>(e.id)] = true;
            touched_.push_back(e.id);
          }
          break;
        case Kind::kFinish:
        case Kind::kVacated: {
          Job& job = jobs_[static_cast<size_t>(e.id)];
          const bool live = job.attempt == e.stamp && (job.phase == Job::Phase::kRunning ||
                                                       job.phase == Job::Phase::kVacating);
          if (!live) break;
          if (e.kind == Kind::kFinish) {
            job.phase = Job::Phase::kDone;
            r_.jobs[static_cast<size_t>(e.id)].end_s = t;
            finishing.push_back(e.id);
          } else {
            const int64_t ran = t - job.attempt_start;
            const int64_t saved =
                config_.checkpoint_s > 0 ? ran / config_.checkpoint_s * config_.checkpoint_s : 0;
            const int64_t lost = (ran - saved) * static_cast<int64_t>(job.gpus.size());
            job.remaining_s -= saved;
            r_.lost_gpu_s += lost;
            r_.jobs[static_cast<size_t>(e.id)].lost_gpu_s += lost;
            job.phase = Job::Phase::kPending;
            vacated.push_back(e.id);
          }
          leaving_.push_back(e.id);
          Leave(e.id, t);
          break;
        }
        case Kind::kTick:
          tick_scheduled_ = false;
          tick = true;
          break;
      }
    }
    ++r_.instants;

    // Samples and verdicts, in GPU order, told in one batch.
    if (config_.policy != HarvestPolicy::kNone) {
      std::sort(touched_.begin(), touched_.end());
      sched::GpuVerdictsChanged batch;
      for (int gpu : touched_) {
        Gpu& g = gpus_[static_cast<size_t>(gpu)];
        Account(gpu, t);  // what changes now (parked, beside) counts from now
        const Lend lend = Judge(gpu, t);
        const core::Duration window = lend.lendable ? QuietWindow(gpu) : core::Duration{};
        if (lend.lendable != g.told_lendable ||
            (lend.lendable && (lend.memory != g.told_lend_memory || window != g.told_quiet_p80))) {
          if (!lend.lendable && g.holder >= 0 && UseOf(gpu) != Use::kQuiet) ++r_.owner_returns;
          g.told_lendable = lend.lendable;
          if (lend.lendable) {
            g.told_lend_memory = lend.memory;
            g.told_quiet_p80 = window;
          }
          batch.changes.push_back({g.uuid, lend.lendable, "", lend.memory, window});
        }
        ScheduleSample(gpu, t);
      }
      if (!batch.changes.empty()) GLEANER_RETURN_IF_ERROR(Tell(batch, t));
      // Exits, then arrivals.
      for (int j : finishing) {
        const HarvestJob& h = queue_[static_cast<size_t>(j)];
        runtimes_.Add({h.user, h.user, ""}, core::Seconds(h.work_s));
        GLEANER_RETURN_IF_ERROR(Tell(sched::JobFinished{IdOf(j)}, t));
      }
      for (int j : vacated) {
        GLEANER_RETURN_IF_ERROR(Tell(sched::JobFailed{IdOf(j), "taken back by its owner"}, t));
      }
    }
    for (int gpu : touched_) is_touched_[static_cast<size_t>(gpu)] = false;
    touched_.clear();
    leaving_.clear();
    for (; next_arrival < queue_.size() && queue_[next_arrival].submit_s <= t; ++next_arrival) {
      AccountQueue(t);
      ++pending_;
      if (config_.policy == HarvestPolicy::kNone) continue;
      const HarvestJob& h = queue_[next_arrival];
      sched::JobRequest req;
      req.id = IdOf(static_cast<int>(next_arrival));
      req.user = h.user;
      req.project = h.user;
      req.gpus = h.gpus;
      req.priority_class = sched::PriorityClass::kOpportunistic;
      req.checkpoints = config_.checkpoint_s > 0;
      req.gpu_memory = h.gpu_memory;
      GuessRuntime(h, req);
      GLEANER_RETURN_IF_ERROR(Tell(sched::JobSubmitted{std::move(req)}, t));
    }
    if (tick && config_.policy != HarvestPolicy::kNone)
      GLEANER_RETURN_IF_ERROR(Tell(sched::Tick{}, t));
    if (pending_ > 0 && !tick_scheduled_ && config_.policy != HarvestPolicy::kNone) {
      tick_scheduled_ = true;
      events_.push({t + config_.tick_s, Kind::kTick, 0, 0});
    }

    // The next instant.
    int64_t next = owner_.end_s;
    if (!events_.empty()) next = std::min(next, events_.top().t);
    if (next_arrival < queue_.size())
      next = std::min(next, std::max(t + 1, queue_[next_arrival].submit_s));
    if (next >= owner_.end_s) break;
    t = next;
  }
  for (size_t g = 0; g < gpus_.size(); ++g) Account(static_cast<int>(g), owner_.end_s);
  AccountQueue(owner_.end_s);
  return std::move(r_);
}

}  // namespace

constexpr auto kRuntimeKnowledgeNames = core::MakeEnumNames<RuntimeKnowledge>({
    {RuntimeKnowledge::kNone, "none"},
    {RuntimeKnowledge::kHistory, "history"},
    {RuntimeKnowledge::kDeclared, "declared"},
});

std::string_view RuntimeKnowledgeName(RuntimeKnowledge k) { return kRuntimeKnowledgeNames.Name(k); }

std::optional<RuntimeKnowledge> ParseRuntimeKnowledge(std::string_view name) {
  return kRuntimeKnowledgeNames.Parse(name);
}

constexpr auto kHarvestPolicyNames = core::MakeEnumNames<HarvestPolicy>({
    {HarvestPolicy::kNone, "none"},
    {HarvestPolicy::kNaive, "naive"},
    {HarvestPolicy::kGleaner, "gleaner"},
    {HarvestPolicy::kColocate, "colocate"},
    {HarvestPolicy::kPark, "park"},
});

std::string_view HarvestPolicyName(HarvestPolicy policy) {
  return kHarvestPolicyNames.Name(policy);
}

core::Result<HarvestResult> RunHarvest(const OwnerTimeline& owner,
                                       const std::vector<HarvestJob>& queue,
                                       const HarvestConfig& config) {
  if (owner.end_s <= owner.start_s) return core::InvalidArgument("the owner timeline is empty");
  if (config.vacate_s < 0 || config.checkpoint_s < 0 || config.heartbeat_s < 1 ||
      config.watch_s < 1 || config.tick_s < 1 || config.park_idle_s < 0 ||
      config.park_notice_s < 0 || !(config.restore_bytes_per_s > 0)) {
    return core::InvalidArgument(
        "vacate, checkpoint, park and notice times must be at least 0; heartbeat, watch and tick "
        "at least 1 s; the restore rate above 0");
  }
  HarvestRun run(owner, queue, config);
  return run.Run();
}

}  // namespace gleaner::sim
