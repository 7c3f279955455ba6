#include "agent/sampler.h"

#include <algorithm>
#include <thread>
#include <utility>

namespace gleaner::agent {
namespace {

// How far back a restart reads each GPU's minutes for its quiet spells.
constexpr core::Duration kSpellHistory = core::Seconds(int64_t{7} * 24 * 3600);

}  // namespace

Sampler::Sampler(gpu::GpuBackend& backend, const ProcessInspector& inspector,
                 store::ObservationStore* store, const core::Clock& clock, SamplerOptions options)
    : backend_(backend),
      inspector_(inspector),
      store_(store),
      clock_(clock),
      options_(std::move(options)),
      classifier_(options_.idle),
      rollups_(options_.idle.max_sample_gap) {
  if (options_.colocation) holders_.emplace(*options_.colocation);
}

observe::GpuSample Sampler::ToSample(const gpu::GpuSnapshot& s, core::TimePoint at,
                                     const LentGpu* lent) const {
  observe::GpuSample out;
  out.at = at;
  // A GPU that could not be attached has no UUID; it is still judged (as
  // Unhealthy) so that it shows, keyed by its index.
  out.uuid = s.uuid.empty() ? core::GpuUuid("index:" + std::to_string(s.index)) : s.uuid;
  out.healthy = s.health == gpu::GpuHealth::kOk;
  out.health_detail = s.health_detail;
  if (s.utilization_gpu_pct.has_value()) out.utilization_pct = s.utilization_gpu_pct.value();
  if (s.memory_used.has_value()) out.memory_used = s.memory_used.value();
  if (s.memory_total.has_value()) out.memory_total = s.memory_total.value();
  if (s.power_draw_w.has_value()) out.power_w = s.power_draw_w.value();
  if (s.power_limit_w.has_value()) out.power_limit_w = s.power_limit_w.value();
  if (s.temperature_c.has_value()) out.temperature_c = s.temperature_c.value();
  out.processes_known = s.processes.has_value();
  if (out.processes_known) {
    for (const gpu::GpuProcess& p : s.processes.value()) {
      observe::ObservedProcess op;
      op.pid = p.pid;
      op.used_memory = p.used_memory.value_or(core::Bytes());
      if (p.sm_utilization_pct.has_value()) op.utilization_pct = p.sm_utilization_pct.value();
      if (auto info = inspector_.Inspect(p.pid)) {
        op.user = info->user;
        op.command = info->command;
        op.started_at = info->started_at;
        // GLEANER_JOB_ID alone is a claim anyone can make; the session is
        // the job's own (a process can leave a session, never join one).
        op.gleaner_job = lent != nullptr &&
                         ((info->gleaner_job && info->gleaner_job_id == std::to_string(lent->job) &&
                           lent->session && info->session_id == lent->session) ||
                          (!lent->slurm_job.empty() && info->slurm_job_id == lent->slurm_job &&
                           lent->slurm_job_uid && info->uid == lent->slurm_job_uid));
      }
      out.processes.push_back(std::move(op));
    }
  }
  return out;
}

core::Result<HostPass> Sampler::SampleOnce(core::Status* store_status) {
  HostPass pass;
  pass.at = clock_.Now();
  GLEANER_ASSIGN_OR_RETURN(pass.snapshots, backend_.Snapshot());
  core::Status learned;
  if (holders_ && !stored_holders_learned_) learned = LearnStoredHolders(pass.at);
  std::vector<observe::MinuteRollup> done;
  std::vector<observe::Verdict> changed;
  const std::map<core::GpuUuid, LentGpu> lent =
      lent_ ? lent_() : std::map<core::GpuUuid, LentGpu>{};
  const std::map<core::GpuUuid, observe::HolderParking> parkings =
      parkings_ ? parkings_() : std::map<core::GpuUuid, observe::HolderParking>{};
  for (const gpu::GpuSnapshot& snapshot : pass.snapshots) {
    const auto l = lent.find(snapshot.uuid);
    observe::GpuSample sample = ToSample(snapshot, pass.at, l == lent.end() ? nullptr : &l->second);
    if (l != lent.end()) {
      sample.lent_to_job = l->second.job;
      sample.lent_to_user = l->second.user;
      sample.beside_holder = l->second.beside_holder;
    }
    if (auto p = parkings.find(snapshot.uuid); p != parkings.end()) sample.parking = p->second;
    observe::Verdict verdict = classifier_.Observe(sample);
    if (verdict.state == observe::GpuState::kIdle ||
        verdict.state == observe::GpuState::kHeldIdle) {
      verdict.evidence.quiet_forecast = classifier_.ForecastQuiet(verdict.uuid);
      const std::string short_quiet = observe::ShortQuietBlock(verdict.evidence.quiet_forecast,
                                                               options_.idle.min_expected_quiet);
      if (!short_quiet.empty() && l == lent.end()) {
        verdict.evidence.lend_blocked = short_quiet;
        verdict.evidence.reason += "; not lent: " + short_quiet;
      }
    }
    if (holders_ && verdict.state == observe::GpuState::kHeldIdle) {
      verdict.evidence.beside_holder = holders_->Beside(sample, verdict);
    }
    if (!options_.lend_allow.Allows(options_.host, snapshot.index, snapshot.uuid)) {
      const bool would_lend = observe::MayLend(verdict, false);
      verdict.evidence.lend_blocked = "outside the lending allow-list ([rules.lend])";
      if (would_lend) verdict.evidence.reason += "; not lent: " + verdict.evidence.lend_blocked;
    }
    for (observe::MinuteRollup& r : rollups_.Add(sample, verdict)) {
      if (holders_) holders_->Learn(r);
      done.push_back(std::move(r));
    }
    // The latest verdict is saved when it changes, and every 30 s so that
    // readers can tell a live verdict from a stale one.
    auto saved = saved_.find(verdict.uuid);
    if (saved == saved_.end() || saved->second.first != verdict.state ||
        pass.at - saved->second.second >= core::Seconds(30)) {
      changed.push_back(verdict);
      saved_[verdict.uuid] = {verdict.state, pass.at};
    }
    pass.samples.push_back(std::move(sample));
    pass.verdicts.push_back(std::move(verdict));
  }
  core::Status s = Persist(done, changed, pass.at);
  if (s.ok()) s = RecordGpus(pass.snapshots, pass.at);
  if (s.ok()) s = learned;
  if (store_status != nullptr) *store_status = s;
  return pass;
}

core::Duration Sampler::Recall(core::Duration span) {
  const core::TimePoint now = clock_.Now();
  core::Duration reached{};
  for (core::Duration ago = span; ago > core::Duration{}; ago -= options_.interval) {
    auto snapshots = backend_.Recall(ago);
    if (!snapshots.ok()) break;
    for (const gpu::GpuSnapshot& s : *snapshots) classifier_.Observe(ToSample(s, now - ago));
    reached = std::max(reached, ago);
  }
  return reached;
}

core::Result<Sampler::Resumed> Sampler::ResumeFromStore() {
  Resumed resumed;
  if (store_ == nullptr) return resumed;
  const core::TimePoint now = clock_.Now();
  GLEANER_ASSIGN_OR_RETURN(std::optional<observe::QuietSpellModel> model,
                           store_->PauseModel(options_.host));
  if (model) {
    classifier_.RestoreModel(*model);
    resumed.pause_model = true;
  }
  GLEANER_ASSIGN_OR_RETURN(std::vector<store::GpuRecord> gpus, store_->Gpus());
  for (const store::GpuRecord& gpu : gpus) {
    if (gpu.host != options_.host) continue;
    // A week of quiet spells for the forecast; the verdict looks back an hour.
    GLEANER_ASSIGN_OR_RETURN(std::vector<observe::MinuteRollup> minutes,
                             store_->Rollups(gpu.uuid, now - kSpellHistory, now));
    classifier_.LearnSpells(gpu.uuid,
                            observe::QuietSpellsIn(minutes, options_.idle.busy_utilization_pct));
    const core::Duration history = classifier_.Resume(gpu.uuid, minutes, now);
    if (history > core::Duration{}) {
      ++resumed.gpus;
      resumed.longest = std::max(resumed.longest, history);
    }
  }
  return resumed;
}

core::Status Sampler::LearnStoredHolders(core::TimePoint now) {
  stored_holders_learned_ = true;
  if (store_ == nullptr) return core::Status::Ok();
  auto minutes = store_->RollupsBetween(now - holders_->config().peak_window, now);
  if (!minutes.ok()) {
    return core::Status(minutes.status().code(),
                        "cannot read the holders' history (" + minutes.status().message() +
                            "): nothing is lent beside them until it is learned again");
  }
  for (const observe::MinuteRollup& m : *minutes) holders_->Learn(m);
  return core::Status::Ok();
}

core::Status Sampler::Persist(const std::vector<observe::MinuteRollup>& done,
                              const std::vector<observe::Verdict>& changed, core::TimePoint now) {
  if (store_ == nullptr) return core::Status::Ok();
  GLEANER_RETURN_IF_ERROR(store_->AddRollups(done));
  if (!done.empty()) {
    observe::UsageProfiles delta(options_.project_of_user);
    for (const observe::MinuteRollup& r : done) delta.Add(r);
    GLEANER_RETURN_IF_ERROR(store_->AddToProfiles(delta));
    GLEANER_RETURN_IF_ERROR(store_->SavePauseModel(options_.host, classifier_.model()));
  }
  GLEANER_RETURN_IF_ERROR(store_->SaveVerdicts(changed));
  if (!last_prune_ || now - *last_prune_ >= core::Seconds(3600)) {
    last_prune_ = now;
    GLEANER_RETURN_IF_ERROR(store_->PruneRollups(now - options_.retention).status());
  }
  return core::Status::Ok();
}

core::Status Sampler::RecordGpus(const std::vector<gpu::GpuSnapshot>& snapshots,
                                 core::TimePoint now) {
  if (store_ == nullptr) return core::Status::Ok();
  std::vector<store::GpuRecord> gpus;
  for (const gpu::GpuSnapshot& s : snapshots) {
    if (s.uuid.empty()) continue;  // not attached: nothing to name it by
    store::GpuRecord g;
    g.uuid = s.uuid;
    g.host = options_.host;
    g.index = s.index;
    g.name = s.name.value_or("");
    if (s.memory_total.has_value()) g.memory_total = s.memory_total.value();
    g.first_seen = g.last_seen = now;
    gpus.push_back(std::move(g));
  }
  const auto same_gpus = [](const std::vector<store::GpuRecord>& a,
                            const std::vector<store::GpuRecord>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
      return x.uuid == y.uuid && x.index == y.index && x.name == y.name &&
             x.memory_total == y.memory_total;
    });
  };
  if (gpus_recorded_at_ && now - *gpus_recorded_at_ < core::Seconds(3600) &&
      same_gpus(gpus, recorded_gpus_)) {
    return core::Status::Ok();
  }
  GLEANER_RETURN_IF_ERROR(store_->SaveGpus(gpus));
  recorded_gpus_ = std::move(gpus);
  gpus_recorded_at_ = now;
  return core::Status::Ok();
}

core::Status Sampler::Flush() {
  const std::vector<observe::MinuteRollup> done = rollups_.Flush();
  std::vector<observe::Verdict> all;
  for (const auto& [uuid, v] : classifier_.verdicts()) all.push_back(v);
  return Persist(done, all, clock_.Now());
}

void Sampler::Run(const std::atomic<bool>& stop,
                  const std::function<void(const HostPass&, const core::Status&)>& on_pass) {
  while (!stop.load()) {
    const auto started = std::chrono::steady_clock::now();
    core::Status store_status;
    auto pass = SampleOnce(&store_status);
    if (pass.ok()) {
      on_pass(*pass, store_status);
    } else {
      on_pass(HostPass{clock_.Now(), {}, {}, {}}, pass.status());
    }
    // Sleep in small steps so a stop request (a signal's flag) is
    // honoured promptly; a Wake ends the sleep early.
    const auto next = started + options_.interval;
    const auto earliest = started + kMinPassSpacing;
    core::MutexLock lock(wake_mu_);
    while (!stop.load() && std::chrono::steady_clock::now() < next) {
      if (woken_ && std::chrono::steady_clock::now() >= earliest) break;
      const auto step = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
      wake_mu_.AwaitUntil(wake_cv_, std::min({next, step, woken_ ? earliest : next}));
    }
    woken_ = false;
  }
  on_pass(HostPass{clock_.Now(), {}, {}, {}}, Flush());
}

void Sampler::Wake() {
  {
    core::MutexLock lock(wake_mu_);
    woken_ = true;
  }
  wake_cv_.notify_one();
}

}  // namespace gleaner::agent
