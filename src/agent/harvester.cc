#include "agent/harvester.h"

#include <set>

#include "sched/simple_placer.h"

namespace gleaner::agent {

using store::JobState;

Harvester::Harvester(Sampler& sampler, store::JobStore& jobs, Executor& executor,
                     const core::Clock& clock, HarvestMode mode, std::string log_dir,
                     int max_gpus_per_job)
    : sampler_(sampler),
      jobs_(jobs),
      executor_(executor),
      clock_(clock),
      mode_(mode),
      log_dir_(std::move(log_dir)),
      max_gpus_per_job_(max_gpus_per_job) {}

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
        executor_.Adopt(j.id, *j.pid, *j.process_started_at).ok()) {
      log("job " + std::to_string(j.id) + " still running (pid " + std::to_string(*j.pid) +
          "): taken back");
      continue;
    }
    store::JobUpdate u;
    u.reason = "its process was gone when gleaner restarted; requeued";
    auto moved = jobs_.Transition(j.id, j.state, JobState::kQueued, u);
    log("job " + std::to_string(j.id) + " " + (moved.ok() ? u.reason : moved.status().message()));
  }
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
  Vacate(pass, *active, log);
  if (mode_ == HarvestMode::kHarvest) StartJobs(pass, *active, log);
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
    const std::string vacate_reason = planner_.Reason(e.id);
    planner_.Forget(e.id);
    if (store::IsFinal(job->state)) {  // cancelled while it ran
      log("job " + std::to_string(e.id) + " ended (" +
          std::string(store::JobStateName(job->state)) + ")");
      continue;
    }
    store::JobUpdate u;
    u.finished_at = e.at;
    u.exit_code = e.exit_code;
    JobState to;
    if (e.status_unknown) {
      // Taken back after a restart, so not our child: how it ended is
      // unknown. Requeue it, as for any job whose process was lost.
      to = JobState::kQueued;
      u.exit_code.reset();
      u.reason = "ended while not gleaner's child (after a restart); exit status unknown, requeued";
    } else if (job->state == JobState::kVacating) {
      // It was asked to leave: it goes back in the queue, whatever it said.
      to = JobState::kQueued;
      u.reason = "vacated: " + vacate_reason;
    } else if (e.exit_code && *e.exit_code == 0) {
      to = JobState::kSucceeded;
      u.reason = "exited 0";
    } else {
      to = JobState::kFailed;
      u.reason = e.exit_code ? "exited " + std::to_string(*e.exit_code)
                             : "killed by signal " + std::to_string(e.signal.value_or(0));
    }
    auto moved = jobs_.Transition(e.id, job->state, to, u);
    log("job " + std::to_string(e.id) + " " + std::string(store::JobStateName(job->state)) +
        " -> " + std::string(store::JobStateName(to)) + ": " +
        (moved.ok() ? u.reason : moved.status().message()));
  }
}

void Harvester::Vacate(const HostPass& pass, const std::vector<store::JobRecord>& active,
                       const std::function<void(const std::string&)>& log) {
  // A lent GPU is claimed back when anyone else's process is on it, when a
  // protected user or command appears, or when it is no longer healthy.
  std::map<core::GpuUuid, sched::GpuClaim> claims;
  for (const observe::Verdict& v : pass.verdicts) {
    if (v.evidence.foreign_processes > 0 || v.state == observe::GpuState::kProtected ||
        v.state == observe::GpuState::kUnhealthy || v.state == observe::GpuState::kReserved) {
      claims[v.uuid] = {v.uuid, v.evidence.reason};
    }
  }
  std::vector<sched::RunningOnGpus> running;
  for (const store::JobRecord& j : active) {
    if (!executor_.running().contains(j.id)) continue;  // not ours to signal
    running.push_back({j.id, j.gpus, j.spec.checkpoint_signal, j.spec.grace});
  }
  for (const sched::VacateAction& a : planner_.Plan(running, claims, clock_.Now())) {
    if (a.kind == sched::VacateAction::Kind::kCheckpoint) {
      store::JobUpdate u;
      u.reason = a.reason;
      auto moved = jobs_.Transition(a.job, JobState::kRunning, JobState::kVacating, u);
      if (!moved.ok()) log("job " + std::to_string(a.job) + ": " + moved.status().message());
      log("job " + std::to_string(a.job) + " vacating (signal " + std::to_string(a.signal) +
          "): " + a.reason);
    } else {
      log("job " + std::to_string(a.job) + " killed: " + a.reason);
    }
    if (auto s = executor_.Signal(a.job, a.signal); !s.ok()) log(s.message());
  }
}

void Harvester::StartJobs(const HostPass& pass, const std::vector<store::JobRecord>& active,
                          const std::function<void(const std::string&)>& log) {
  auto queued = jobs_.List({JobState::kQueued});
  if (!queued.ok()) {
    log("jobs: " + queued.status().message());
    return;
  }
  if (queued->empty()) return;
  std::set<core::GpuUuid> taken;
  std::map<sched::JobId, int64_t> running_tasks;  // per array
  for (const store::JobRecord& j : active) {
    taken.insert(j.gpus.begin(), j.gpus.end());
    if (j.array_id) ++running_tasks[*j.array_id];
  }
  std::vector<sched::FreeGpu> free;
  std::map<std::string, int> not_free;  // "busy" -> 3: what the other GPUs are doing
  for (size_t i = 0; i < pass.verdicts.size(); ++i) {
    const observe::Verdict& v = pass.verdicts[i];
    if (v.state != observe::GpuState::kIdle || taken.contains(v.uuid)) {
      ++not_free[taken.contains(v.uuid) ? "lent" : std::string(observe::GpuStateName(v.state))];
      continue;
    }
    const gpu::GpuSnapshot& s = pass.snapshots[i];
    free.push_back({v.uuid, s.name.value_or(""), s.memory_total.value_or(core::Bytes())});
  }
  std::string others;
  for (const auto& [state, n] : not_free) {
    others += (others.empty() ? "" : ", ") + std::to_string(n) + " " + state;
  }
  std::vector<sched::QueuedJob> waiting;
  std::map<sched::JobId, const store::JobRecord*> by_id;
  std::map<sched::JobId, std::string> reasons;  // why each job not started waits
  for (const store::JobRecord& j : *queued) {
    std::string blocked_by;  // a dependency that has not succeeded yet
    std::string doomed;      // one that never will
    for (sched::JobId dep : j.spec.after_success) {
      auto d = jobs_.Get(dep);
      if (!d.ok() || (store::IsFinal(d->state) && d->state != JobState::kSucceeded)) {
        doomed = "job " + std::to_string(dep) +
                 (d.ok() ? " " + std::string(store::JobStateName(d->state)) : " does not exist");
      } else if (d->state != JobState::kSucceeded && blocked_by.empty()) {
        blocked_by = "waiting for job " + std::to_string(dep) + " to succeed";
      }
    }
    if (!doomed.empty()) {
      store::JobUpdate u;
      u.reason = "dependency " + doomed;
      if (jobs_.Transition(j.id, JobState::kQueued, JobState::kCancelled, u).ok()) {
        log("job " + std::to_string(j.id) + " cancelled: " + u.reason);
      }
      continue;
    }
    by_id[j.id] = &j;
    if (!blocked_by.empty()) {
      reasons[j.id] = blocked_by;
      continue;
    }
    if (j.spec.gpus > max_gpus_per_job_) {
      reasons[j.id] = "needs " + std::to_string(j.spec.gpus) + " GPUs; this host has " +
                      std::to_string(max_gpus_per_job_);
      continue;
    }
    if (j.array_id && j.spec.array && j.spec.array->max_parallel > 0) {
      int64_t& running = running_tasks[*j.array_id];
      if (running >= j.spec.array->max_parallel) {
        reasons[j.id] = "array " + std::to_string(*j.array_id) + " runs at most " +
                        std::to_string(j.spec.array->max_parallel) + " tasks at once";
        continue;
      }
      ++running;  // this task may take a slot now; later ones wait for the next pass
    }
    waiting.push_back({j.id, j.spec, j.submitted_at});
  }
  const std::vector<sched::Placement> placements = sched::PlaceJobs(waiting, free);
  std::set<sched::JobId> placed;
  for (const sched::Placement& p : placements) placed.insert(p.job);
  for (const sched::QueuedJob& w : waiting) {
    if (placed.contains(w.id)) continue;
    reasons[w.id] = sched::WhyWaiting(w.spec, free) + (others.empty() ? "" : " (" + others + ")");
  }
  for (const auto& [id, reason] : reasons) {
    if (by_id.at(id)->reason != reason) jobs_.Annotate(id, JobState::kQueued, reason).IgnoreError();
  }
  for (const sched::Placement& p : placements) {
    const store::JobRecord& j = *by_id.at(p.job);
    store::JobUpdate u;
    u.gpus = p.gpus;
    u.started_at = clock_.Now();
    u.reason = "placed on idle GPU(s)";
    // Claim it first: of two starters, only one wins the compare-and-set.
    auto claimed = jobs_.Transition(j.id, JobState::kQueued, JobState::kRunning, u);
    if (!claimed.ok()) continue;
    auto launched =
        executor_.Launch({j.id, j.uid, j.spec, p.gpus, log_dir_, j.array_id, j.array_index});
    if (!launched.ok()) {
      store::JobUpdate failed;
      failed.finished_at = clock_.Now();
      failed.reason = launched.status().message();
      jobs_.Transition(j.id, JobState::kRunning, JobState::kFailed, failed).status().IgnoreError();
      log("job " + std::to_string(j.id) + " failed to start: " + launched.status().message());
      continue;
    }
    if (launched->process_started_at) {
      jobs_.RecordProcess(j.id, launched->pid, *launched->process_started_at).IgnoreError();
    }
    std::string gpus;
    for (const core::GpuUuid& g : p.gpus) gpus += (gpus.empty() ? "" : ",") + g.str();
    log("job " + std::to_string(j.id) + " started as " + j.user + " on " + gpus + " (pid " +
        std::to_string(launched->pid) + ")");
  }
}

}  // namespace gleaner::agent
