// The harvester's side of scheduling: it keeps sched::Scheduler told of
// this host's GPUs and queue, and carries out what it decides.
#include <algorithm>

#include "agent/harvester.h"

namespace gleaner::agent {

using store::JobState;

std::map<core::GpuUuid, int> NvlinkIslands(const std::vector<gpu::GpuLink>& links,
                                           const std::vector<gpu::GpuSnapshot>& gpus) {
  std::map<core::GpuUuid, int> island;
  for (const gpu::GpuLink& l : links) {
    if (!l.nvlink.value_or(false)) continue;
    for (const core::GpuUuid& g : {l.a, l.b}) island.try_emplace(g, -1);
  }
  // Few GPUs per host: relabel until nothing changes.
  for (const gpu::GpuSnapshot& s : gpus) {
    if (island.contains(s.uuid)) island[s.uuid] = static_cast<int>(s.index);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const gpu::GpuLink& l : links) {
      if (!l.nvlink.value_or(false)) continue;
      const int low = std::min(island[l.a], island[l.b]);
      for (const core::GpuUuid& g : {l.a, l.b}) {
        if (island[g] != low) island[g] = low, changed = true;
      }
    }
  }
  return island;
}

void Harvester::TellScheduler(const sched::Event& event,
                              const std::function<void(const std::string&)>& log) {
  auto actions = scheduler_.Handle(event, clock_.Now());
  if (!actions.ok()) {
    log("scheduler: " + actions.status().message());
    return;
  }
  decided_.insert(decided_.end(), actions->begin(), actions->end());
}

void Harvester::ReportExit(sched::JobId id, bool succeeded, const std::string& reason,
                           const std::function<void(const std::string&)>& log) {
  const sched::JobPhase phase = scheduler_.Phase(id);
  // Jobs taken back after a restart were not placed by this scheduler.
  if (phase != sched::JobPhase::kRunning && phase != sched::JobPhase::kVacating) return;
  if (succeeded) {
    TellScheduler(sched::JobFinished{id}, log);
  } else {
    TellScheduler(sched::JobFailed{id, reason}, log);
  }
}

void Harvester::AddNode(const HostPass& pass, const std::map<core::GpuUuid, bool>& lendable,
                        const std::function<void(const std::string&)>& log) {
  const std::map<core::GpuUuid, int> islands = NvlinkIslands(host_.links, pass.snapshots);
  sched::NodeSpec node{core::NodeId(host_.node), {}};
  for (const gpu::GpuSnapshot& s : pass.snapshots) {
    if (s.uuid.empty()) continue;  // never attached: nothing to lend
    sched::GpuSpec g;
    g.uuid = s.uuid;
    g.index = static_cast<int>(s.index);
    g.model = s.name.value_or("");
    g.memory = s.memory_total.value_or(core::Bytes());
    auto island = islands.find(s.uuid);
    g.nvlink_island = island == islands.end() ? -1 : island->second;
    g.lendable = lendable.at(s.uuid);
    node.gpus.push_back(std::move(g));
  }
  TellScheduler(sched::NodeAdded{std::move(node)}, log);
  lendable_ = lendable;
  node_added_ = true;
}

void Harvester::Schedule(const HostPass& pass, const std::vector<store::JobRecord>& active,
                         const std::function<void(const std::string&)>& log) {
  // A GPU may be lent when it is idle, or when a job the scheduler placed
  // holds it and nobody has claimed it back. A job taken back after a
  // restart holds its GPUs outside the scheduler's view: they are not
  // lendable until it ends.
  std::map<core::GpuUuid, sched::JobId> held;
  for (const store::JobRecord& j : active) {
    for (const core::GpuUuid& g : j.gpus) held[g] = j.id;
  }
  std::map<core::GpuUuid, bool> lendable;
  std::map<core::GpuUuid, std::string> why;
  for (const observe::Verdict& v : pass.verdicts) {
    auto holder = held.find(v.uuid);
    bool placed = false;
    if (holder != held.end()) {
      const sched::JobPhase phase = scheduler_.Phase(holder->second);
      placed = phase == sched::JobPhase::kRunning || phase == sched::JobPhase::kVacating;
    }
    lendable[v.uuid] = (holder == held.end() || placed) && observe::MayLend(v, placed);
    why[v.uuid] = v.evidence.reason;
  }
  if (!node_added_) {
    AddNode(pass, lendable, log);
  } else {
    sched::GpuVerdictsChanged changed;
    for (const auto& [uuid, can_lend] : lendable) {
      auto told = lendable_.find(uuid);
      if (told == lendable_.end() || told->second == can_lend) continue;
      told->second = can_lend;
      changed.changes.push_back({uuid, can_lend, why[uuid]});
    }
    if (!changed.changes.empty()) TellScheduler(changed, log);
  }
  // Exits since the last pass are among what it carries out.
  queue_.Pass(
      active, decided_, [&](const sched::Action& a) { Carry(a, log); }, log);
}

void Harvester::Carry(const sched::Action& action,
                      const std::function<void(const std::string&)>& log) {
  if (const auto* start = std::get_if<sched::StartJob>(&action)) {
    queue_.Left(start->job);
    if (scheduler_.Phase(start->job) != sched::JobPhase::kRunning) {
      // Taken back in the batch that started it: nothing was launched.
      TellScheduler(sched::JobFailed{start->job, "its GPUs were taken back before it started"},
                    log);
      return;
    }
    preempting_.erase(start->job);
    Start(*start, log);
  } else if (const auto* preempt = std::get_if<sched::PreemptJob>(&action)) {
    // Vacate signals it; a job that never launched has nothing to signal.
    if (executor_.running().contains(preempt->job)) preempting_[preempt->job] = preempt->reason;
  } else if (const auto* resize = std::get_if<sched::ResizeJob>(&action)) {
    // A shrink is a preemption and an immediate restart on what it keeps
    // (RecordExits restarts it when its processes are gone).
    if (executor_.running().contains(resize->job)) {
      preempting_[resize->job] = resize->reason;
      resizing_[resize->job] = *resize;
    } else {
      TellScheduler(sched::JobResized{resize->job}, log);  // nothing runs to shrink
    }
  } else if (const auto* requeue = std::get_if<sched::RequeueJob>(&action)) {
    preempting_.erase(requeue->job);
    queue_.Requeued(requeue->job);
  } else if (const auto* reject = std::get_if<sched::RejectJob>(&action)) {
    queue_.Left(reject->job);
    store::JobUpdate u;
    u.reason = "cannot run here: " + reject->reason;
    if (jobs_.Transition(reject->job, JobState::kQueued, JobState::kCancelled, u).ok()) {
      log("job " + std::to_string(reject->job) + " " + u.reason);
    }
  }
}

bool Harvester::Start(const sched::StartJob& start,
                      const std::function<void(const std::string&)>& log) {
  auto job = jobs_.Get(start.job);
  store::JobUpdate u;
  u.gpus = start.gpus;
  u.started_at = clock_.Now();
  u.reason = "placed on idle GPU(s)";
  // Claim it first: of two starters, only one wins the compare-and-set. A
  // job that left the queue meanwhile (held, cancelled) is not started.
  auto claimed = job.ok() ? jobs_.Transition(start.job, JobState::kQueued, JobState::kRunning, u)
                          : core::Result<store::JobRecord>(job.status());
  if (!claimed.ok()) {
    TellScheduler(sched::JobFailed{start.job, claimed.status().message()}, log);
    return false;
  }
  auto launched = executor_.Launch(
      {job->id, job->uid, job->spec, start.gpus, log_dir_, job->array_id, job->array_index});
  if (!launched.ok()) {
    store::JobUpdate failed;
    failed.finished_at = clock_.Now();
    failed.reason = launched.status().message();
    jobs_.Transition(job->id, JobState::kRunning, JobState::kFailed, failed).status().IgnoreError();
    log("job " + std::to_string(job->id) + " failed to start: " + launched.status().message());
    TellScheduler(sched::JobFailed{job->id, failed.reason}, log);
    return false;
  }
  if (launched->process_started_at) {
    jobs_.RecordProcess(job->id, launched->pid, *launched->process_started_at).IgnoreError();
  }
  std::string gpus;
  for (const core::GpuUuid& g : start.gpus) gpus += (gpus.empty() ? "" : ",") + g.str();
  if (metrics_ != nullptr) metrics_->JobStarted(*u.started_at - job->submitted_at);
  log("job " + std::to_string(job->id) + " started as " + job->user + " on " + gpus + " (pid " +
      std::to_string(launched->pid) + ")");
  return true;
}

}  // namespace gleaner::agent
