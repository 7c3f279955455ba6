// The Coordinator's side that hears what became of jobs on their hosts:
// each event an agent reports (started, exited, vacated), a gang's ends,
// and the runtimes learnt from jobs that finished.
#include <tuple>

#include "cluster/coordinator.h"
#include "cluster/job_exit.h"
#include "core/format.h"

namespace gleaner::cluster {

using store::JobState;

namespace {

// How one process's end moves its job, and why.
std::pair<JobState, std::string> ExitOutcome(const std::string& agent, const store::JobRecord& job,
                                             const JobEvent& e, const std::string& preempt_reason) {
  if (e.launch_failed)
    return {JobState::kFailed, "could not start on host " + agent + ": " + e.reason};
  const ExitMove move = MoveForExit(
      {e.exit_code, e.signal, e.status_unknown, e.vacated || job.state == JobState::kVacating,
       e.reason.empty() ? preempt_reason : e.reason, e.vacated ? "" : e.reason},
      "ended while gleaner's agent on host " + agent +
          " was restarting; exit status unknown, requeued");
  // A session started again would have nobody attached: it ends here.
  if (job.spec.pty && move.to == JobState::kQueued) {
    return {JobState::kCancelled, SessionEnded(move.reason)};
  }
  return {move.to, move.reason};
}

}  // namespace

core::Status Coordinator::Apply(const std::string& agent, Host& host, const JobEvent& e,
                                const Log& log) {
  auto job = store_->Get(e.of.job);
  if (job.status().code() == core::StatusCode::kNotFound) return core::Status::Ok();
  GLEANER_RETURN_IF_ERROR(job.status());
  // An event of an earlier attempt, or of a job this host no longer holds
  // (requeued while it was away), changes nothing: the reply tells the
  // agent to stop whatever it still runs of it.
  if (job->attempts != e.of.attempt) return core::Status::Ok();
  // Cancelled while it ran (by its owner, or past its max_runtime): no
  // longer assigned, so killed; its end frees its GPUs for the scheduler.
  if (e.kind == JobEvent::Kind::kExited && store::IsFinal(job->state) &&
      hosts_.OnHost(agent, *job)) {
    log(Job(job->id) + " ended (" + std::string(store::JobStateName(job->state)) + ")");
    host.jobs.erase(job->id);
    preempting_.erase(job->id);
    resizing_.erase(job->id);
    ReportExit(job->id, false, "cancelled", log);
    return core::Status::Ok();
  }
  if (!host.jobs.contains(job->id)) return core::Status::Ok();
  switch (e.kind) {
    case JobEvent::Kind::kStarted: {
      // A gang's process of record is rank 0's.
      const std::string* first = job->gpus.empty() ? nullptr : hosts_.NameOf(job->gpus.front());
      if (first != nullptr && *first != agent) return core::Status::Ok();
      // Sent again after a lost reply, it may find the job vacating: the
      // process is recorded only while the job runs.
      if (job->state == JobState::kRunning && e.pid && e.process_started_at) {
        GLEANER_RETURN_IF_ERROR(store_->RecordProcess(job->id, *e.pid, *e.process_started_at));
      }
      // The first word of this attempt's process (the store still holds
      // the previous attempt's until then).
      if (job->state == JobState::kRunning &&
          (job->pid != e.pid || job->process_started_at != e.process_started_at)) {
        start_latency_.Observe(core::ToSecondsDouble(e.at - job->submitted_at));
        if (!options_.agent_in_process) {
          log(Job(job->id) + " started as " + job->user + " on host " + agent + " (pid " +
              std::to_string(e.pid.value_or(0)) + ")");
        }
      }
      host.jobs[job->id].pid = e.pid;
      // What the agent's runner says of the job (Slurm's state of a bridged
      // job), shown as the running job's reason.
      if (job->state == JobState::kRunning && !e.reason.empty() && e.reason != job->reason) {
        GLEANER_RETURN_IF_ERROR(store_->Annotate({{job->id, e.reason}}, JobState::kRunning));
      }
      return core::Status::Ok();
    }
    case JobEvent::Kind::kVacating: {
      // One member leaving takes the whole gang with it.
      if (job->spec.nodes > 1 && !preempting_.contains(job->id)) {
        preempting_[job->id] = "its member on host " + agent + " is leaving: " + e.reason;
        GangEndOf(*job).cause = agent;
        NewOrdersForJob(job->id);
      }
      if (job->state != JobState::kRunning) return core::Status::Ok();
      store::JobUpdate u;
      u.reason = e.reason;
      auto moved = store_->Transition(job->id, JobState::kRunning, JobState::kVacating, u);
      if (moved.ok()) {
        host.jobs[job->id] = *moved;
        if (!options_.agent_in_process) {
          log(Job(job->id) + " vacating on host " + agent + ": " + e.reason);
        }
      } else if (moved.status().code() != core::StatusCode::kFailedPrecondition) {
        return moved.status();
      }
      return core::Status::Ok();
    }
    case JobEvent::Kind::kExited:
      return ApplyExit(agent, host, *job, e, log);
  }
  return core::Status::Ok();
}

core::Status Coordinator::ApplyExit(const std::string& agent, Host& host,
                                    const store::JobRecord& job, const JobEvent& e,
                                    const Log& log) {
  if (job.spec.nodes > 1) return ApplyGangExit(agent, job, e, log);
  const std::string preempt_reason = preempting_.count(job.id) ? preempting_[job.id] : "";
  store::JobUpdate u;
  u.finished_at = e.at;
  u.exit_code = e.status_unknown ? std::nullopt : e.exit_code;
  JobState to = JobState::kFailed;
  std::tie(to, u.reason) = ExitOutcome(agent, job, e, preempt_reason);
  auto resize = resizing_.extract(job.id);
  if (resize && to == JobState::kQueued) {
    u.event = "resized";
    u.reason = "shrinking to " + std::to_string(resize.mapped().gpus.size()) +
               " GPU(s): " + (e.reason.empty() ? preempt_reason : e.reason);
  }
  auto moved = store_->Transition(job.id, job.state, to, u);
  if (!moved.ok() && moved.status().code() != core::StatusCode::kFailedPrecondition) {
    return moved.status();
  }
  host.jobs.erase(job.id);
  preempting_.erase(job.id);
  log(Job(job.id) + " on host " + agent + " " + std::string(store::JobStateName(job.state)) +
      " -> " + std::string(store::JobStateName(to)) + ": " +
      (moved.ok() ? u.reason : moved.status().message()));
  if (resize && moved.ok() && to == JobState::kQueued) {
    // An elastic job left to shrink: it starts again at once on the GPUs
    // it keeps, and the scheduler frees the others.
    const sched::ResizeJob& r = resize.mapped();
    if (Start({r.job, r.node, r.gpus, r.gpu_indices, sched::kMilliPerGpu, {}}, log)) {
      Tell(sched::JobResized{r.job}, log);
    }
    return core::Status::Ok();
  }
  if (moved.ok() && to == JobState::kSucceeded) LearnRuntime(job, e.at);
  ReportExit(job.id, to == JobState::kSucceeded, u.reason, log);
  return core::Status::Ok();
}

core::Status Coordinator::ApplyGangExit(const std::string& agent, const store::JobRecord& job,
                                        const JobEvent& e, const Log& log) {
  const std::vector<std::string> hosts = hosts_.HostsOf(job);
  const auto rank = std::find(hosts.begin(), hosts.end(), agent) - hosts.begin();
  const std::string member = "rank " + std::to_string(rank) + " on host " + agent;
  const auto preempting = preempting_.find(job.id);
  const auto [to, reason] =
      ExitOutcome(agent, job, e, preempting == preempting_.end() ? "" : preempting->second);
  GangEnd& end = GangEndOf(job);
  end.ended.insert(agent);
  if (to != JobState::kSucceeded && !end.failure) end.failure = {to, member + ": " + reason};
  if (to != JobState::kSucceeded && agent == end.cause)
    end.cause_failure = {to, member + ": " + reason};
  const bool all = std::all_of(hosts.begin(), hosts.end(), [&](const std::string& h) {
    mu_.AssertHeld();
    return end.ended.contains(h) || MemberGone(h, job);
  });
  if (!all) {
    log(Job(job.id) + " " + member + " ended: " + reason);
    // The rest cannot go on without it: they are stopped as for a
    // preemption (checkpoint signal, grace, kill).
    if (end.failure && !preempting_.contains(job.id)) {
      preempting_[job.id] = end.failure->second;
      NewOrdersForJob(job.id);
    }
    return core::Status::Ok();
  }
  if (end.cause_failure) end.failure = end.cause_failure;
  store::JobUpdate u;
  u.finished_at = e.at;
  const JobState final_state = end.failure ? end.failure->first : JobState::kSucceeded;
  u.reason = end.failure
                 ? end.failure->second
                 : "every member of the gang exited 0 (" + std::to_string(hosts.size()) + " nodes)";
  if (final_state == JobState::kSucceeded) u.exit_code = 0;
  auto moved = store_->Transition(job.id, job.state, final_state, u);
  if (!moved.ok() && moved.status().code() != core::StatusCode::kFailedPrecondition) {
    return moved.status();  // the last member's end is sent again
  }
  for (const std::string& h : hosts) {
    if (Host* host = hosts_.Find(h)) host->jobs.erase(job.id);
  }
  preempting_.erase(job.id);
  gang_ends_.erase(job.id);
  log(Job(job.id) + " (a gang of " + std::to_string(hosts.size()) + " nodes) " +
      std::string(store::JobStateName(job.state)) + " -> " +
      std::string(store::JobStateName(final_state)) + ": " +
      (moved.ok() ? u.reason : moved.status().message()));
  if (moved.ok() && final_state == JobState::kSucceeded) LearnRuntime(job, e.at);
  ReportExit(job.id, final_state == JobState::kSucceeded, u.reason, log);
  return core::Status::Ok();
}

Coordinator::GangEnd& Coordinator::GangEndOf(const store::JobRecord& job) {
  GangEnd& end = gang_ends_[job.id];
  if (end.attempt != job.attempts) end = {job.attempts, {}, std::nullopt, {}, std::nullopt};
  return end;
}

void Coordinator::LearnRuntime(const store::JobRecord& job, core::TimePoint end) {
  if (job.started_at) runtimes_.Add(sched::RuntimeKeyOf(job.spec, job.user), end - *job.started_at);
}

// The succeeded jobs the store still keeps, oldest first, so that each
// key keeps its newest runs.
void Coordinator::ReadRuntimes(const Log& log) {
  store::JobQuery q;
  q.states = {JobState::kSucceeded};
  q.limit = 1000;
  for (;;) {
    auto page = store_->Find(q);
    if (!page.ok()) {
      log("jobs: runtimes of past jobs unread: " + page.status().message());
      return;
    }
    for (const store::JobRecord& j : *page) {
      if (j.finished_at) LearnRuntime(j, *j.finished_at);
    }
    if (static_cast<int64_t>(page->size()) < q.limit) return;
    q.after = page->back().id;
  }
}

void Coordinator::ReportExit(sched::JobId id, bool succeeded, const std::string& reason,
                             const Log& log) {
  const sched::JobPhase phase = scheduler_.Phase(id);
  // Jobs started before this coordinator led were not placed by its scheduler.
  if (phase != sched::JobPhase::kRunning && phase != sched::JobPhase::kVacating) return;
  if (succeeded) {
    Tell(sched::JobFinished{id}, log);
  } else {
    Tell(sched::JobFailed{id, reason}, log);
  }
}

}  // namespace gleaner::cluster
