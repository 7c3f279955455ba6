#include "agent/harvester.h"

#include <set>

#include "cluster/job_exit.h"
#include "core/format.h"

namespace gleaner::agent {

using store::JobState;

Harvester::Harvester(Sampler& sampler, store::JobStore& jobs, Executor& executor,
                     const core::Clock& clock, HarvestMode mode, std::string log_dir,
                     HostLayout host)
    : sampler_(sampler),
      jobs_(jobs),
      executor_(executor),
      clock_(clock),
      mode_(mode),
      log_dir_(std::move(log_dir)),
      host_(std::move(host)),
      scheduler_(host_.scheduler),
      queue_(jobs_, scheduler_,
             [this](const sched::Event& e, const cluster::Log& log) { TellScheduler(e, log); }) {}

core::Status Harvester::Tick(const std::function<void(const std::string&)>& log) {
  core::Status store_status;
  GLEANER_ASSIGN_OR_RETURN(HostPass pass, sampler_.SampleOnce(&store_status));
  if (!store_status.ok()) log("store: " + store_status.message());
  Act(pass, log);
  return core::Status::Ok();
}

void Harvester::Recover(const std::function<void(const std::string&)>& log) {
  auto active = jobs_.List({JobState::kRunning, JobState::kVacating});
  if (!active.ok()) {
    log("jobs: " + active.status().message());
    return;
  }
  for (const store::JobRecord& j : *active) {
    if (j.pid && j.process_started_at &&
        executor_.Adopt(j.id, *j.pid, *j.process_started_at, log_dir_).ok()) {
      log("job " + std::to_string(j.id) + " still running (pid " + std::to_string(*j.pid) +
          "): taken back");
      continue;
    }
    // Ended while gleaner was down: as its first process recorded, or, when
    // that was killed too, unknown and requeued.
    const std::optional<JobExit> ended = Executor::EndedWhileAway(j.id, log_dir_);
    const cluster::ExitMove move = cluster::MoveForExit(
        {ended ? ended->exit_code : std::nullopt, ended ? ended->signal : std::nullopt, !ended,
         j.state == JobState::kVacating, "asked to leave before gleaner restarted"},
        "its process was gone when gleaner restarted; requeued");
    store::JobUpdate u;
    u.reason = move.reason;
    if (ended) u.exit_code = ended->exit_code;
    auto moved = jobs_.Transition(j.id, j.state, move.to, u);
    log("job " + std::to_string(j.id) + " " + (moved.ok() ? u.reason : moved.status().message()));
  }
  executor_.SweepLeftovers();
}

void Harvester::Act(const HostPass& pass, const std::function<void(const std::string&)>& log) {
  RecordExits(log);
  KillCancelled(log);
  // Running and vacating jobs, read once: vacating keeps a job's GPUs.
  auto active = jobs_.List({JobState::kRunning, JobState::kVacating});
  if (!active.ok()) {
    log("jobs: " + active.status().message());
    return;
  }
  // The scheduler first: it learns of reclaimed GPUs and decides
  // preemptions, which Vacate then carries out with the owners' claims.
  if (mode_ == HarvestMode::kHarvest) {
    Schedule(pass, *active, log);
  } else {
    SayMonitorModeStartsNothing(log);
  }
  Vacate(pass, *active, log);
}

void Harvester::SayMonitorModeStartsNothing(const std::function<void(const std::string&)>& log) {
  static const std::string kReason =
      "gleaner up runs in monitor mode and starts no job; restart it with --mode harvest";
  auto queued = jobs_.List({JobState::kQueued});
  if (!queued.ok()) return;
  std::vector<std::pair<sched::JobId, std::string>> changed;
  for (const store::JobRecord& j : *queued) {
    if (j.reason != kReason) changed.emplace_back(j.id, kReason);
  }
  if (auto s = jobs_.Annotate(changed, JobState::kQueued); !s.ok()) log("jobs: " + s.message());
}

void Harvester::KillCancelled(const std::function<void(const std::string&)>& log) {
  // `gleaner cancel` marks a running job cancelled; a job past its
  // max_runtime is cancelled here. Their processes are killed.
  for (const auto& [id, job] : executor_.running()) {
    if (cancelled_.contains(id)) continue;
    auto record = jobs_.Get(id);
    if (!record.ok()) continue;
    if (record->state == JobState::kRunning && record->spec.max_runtime && record->started_at &&
        clock_.Now() - *record->started_at > *record->spec.max_runtime) {
      store::JobUpdate u;
      u.reason = "ran longer than its max_runtime of " +
                 std::to_string(record->spec.max_runtime->count() / 1'000'000) + " s";
      if (jobs_.Transition(id, JobState::kRunning, JobState::kCancelled, u).ok()) {
        record->state = JobState::kCancelled;
        log("job " + std::to_string(id) + " " + u.reason);
      }
    }
    if (record->state == JobState::kCancelled) {
      cancelled_.insert(id);
      log("job " + std::to_string(id) + " cancelled: killing it");
      executor_.Signal(id, 9).IgnoreError();
    }
  }
}

void Harvester::RecordExits(const std::function<void(const std::string&)>& log) {
  for (const JobExit& e : executor_.Reap()) {
    auto job = jobs_.Get(e.id);
    if (!job.ok()) {
      log("job " + std::to_string(e.id) + " ended but is unknown: " + job.status().message());
      continue;
    }
    cancelled_.erase(e.id);
    preempting_.erase(e.id);
    const std::string vacate_reason = planner_.Reason(e.id);
    // From the claim (the checkpoint signal went out in that same pass) to
    // the job's processes gone: how long the owner waited for the GPU.
    const std::optional<core::TimePoint> claimed_at = planner_.Since(e.id);
    planner_.Forget(e.id);
    if (store::IsFinal(job->state)) {  // cancelled while it ran
      log("job " + std::to_string(e.id) + " ended (" +
          std::string(store::JobStateName(job->state)) + ")");
      ReportExit(e.id, false, "cancelled", log);
      continue;
    }
    // Taken back after a restart, an adopted job whose first process was
    // killed too ended unseen: it is requeued, as for any lost process. A
    // vacating job was asked to leave: back in the queue, whatever it said.
    const cluster::ExitMove move = cluster::MoveForExit(
        {e.exit_code, e.signal, e.status_unknown, job->state == JobState::kVacating, vacate_reason},
        "ended while not gleaner's child (after a restart); exit status unknown, requeued");
    const JobState to = move.to;
    store::JobUpdate u;
    u.finished_at = e.at;
    u.exit_code = e.status_unknown ? std::nullopt : e.exit_code;
    u.reason = move.reason;
    if (!e.status_unknown && job->state == JobState::kVacating && claimed_at) {
      log("job " + std::to_string(e.id) + " gave its GPUs back " +
          core::FormatDuration(clock_.Now() - *claimed_at) + " after the claim");
      if (metrics_ != nullptr) metrics_->GaveBack(clock_.Now() - *claimed_at);
    }
    auto resize = resizing_.extract(e.id);
    if (resize && job->state == JobState::kVacating) {
      u.reason = "shrinking to " + std::to_string(resize.mapped().gpus.size()) +
                 " GPU(s): " + vacate_reason;
    }
    auto moved = jobs_.Transition(e.id, job->state, to, u);
    log("job " + std::to_string(e.id) + " " + std::string(store::JobStateName(job->state)) +
        " -> " + std::string(store::JobStateName(to)) + ": " +
        (moved.ok() ? u.reason : moved.status().message()));
    if (resize && moved.ok() && to == JobState::kQueued) {
      // An elastic job left to shrink: it starts again at once on the GPUs
      // it keeps, and the scheduler frees the others.
      const sched::ResizeJob& r = resize.mapped();
      if (Start({r.job, r.node, r.gpus, r.gpu_indices, sched::kMilliPerGpu}, log)) {
        TellScheduler(sched::JobResized{r.job}, log);
      }
      continue;
    }
    // A job that was asked to leave failed, for the scheduler, whatever it
    // said: it requeues it as the store did.
    ReportExit(e.id, to == JobState::kSucceeded, u.reason, log);
  }
}

void Harvester::Vacate(const HostPass& pass, const std::vector<store::JobRecord>& active,
                       const std::function<void(const std::string&)>& log) {
  // A lent GPU is claimed back when anyone else's process is on it, when a
  // protected user or command appears, or when it is no longer healthy.
  std::map<core::GpuUuid, sched::GpuClaim> claims;
  std::map<core::GpuUuid, std::string_view> claim_kind;  // for the preemption counter
  for (const observe::Verdict& v : pass.verdicts) {
    if (auto why = observe::ClaimOf(v)) {
      claims[v.uuid] = {v.uuid, *why};
      claim_kind[v.uuid] = v.evidence.foreign_processes > 0           ? "owner_returned"
                           : v.state == observe::GpuState::kProtected ? "protected"
                           : v.state == observe::GpuState::kReserved  ? "reserved"
                                                                      : "unhealthy";
    }
  }
  std::map<sched::JobId, std::string_view> preempted_for;
  std::vector<sched::RunningOnGpus> running;
  for (const store::JobRecord& j : active) {
    if (!executor_.running().contains(j.id)) continue;  // not ours to signal
    running.push_back({j.id, j.gpus, j.spec.checkpoint_signal, j.spec.grace});
    for (const core::GpuUuid& g : j.gpus) {
      if (auto kind = claim_kind.find(g); kind != claim_kind.end()) {
        preempted_for.try_emplace(j.id, kind->second);
      }
    }
    // The scheduler's preemptions (room for a job that outranks it) claim
    // the victim's GPUs the same way an owner does.
    if (auto preempted = preempting_.find(j.id); preempted != preempting_.end()) {
      for (const core::GpuUuid& g : j.gpus)
        claims.try_emplace(g, sched::GpuClaim{g, preempted->second});
      preempted_for.try_emplace(j.id, "scheduler");
    }
  }
  for (const sched::VacateAction& a : planner_.Plan(running, claims, clock_.Now())) {
    if (a.kind == sched::VacateAction::Kind::kCheckpoint) {
      store::JobUpdate u;
      u.reason = a.reason;
      auto moved = jobs_.Transition(a.job, JobState::kRunning, JobState::kVacating, u);
      if (!moved.ok()) log("job " + std::to_string(a.job) + ": " + moved.status().message());
      log("job " + std::to_string(a.job) + " vacating (signal " + std::to_string(a.signal) +
          "): " + a.reason);
      if (metrics_ != nullptr && moved.ok()) {
        const auto kind = preempted_for.find(a.job);
        metrics_->Preempted(kind == preempted_for.end() ? "scheduler" : kind->second);
      }
    } else {
      log("job " + std::to_string(a.job) + " killed: " + a.reason);
    }
    if (auto s = executor_.Signal(a.job, a.signal); !s.ok()) log(s.message());
  }
}

}  // namespace gleaner::agent
