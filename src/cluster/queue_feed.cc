#include "cluster/queue_feed.h"

#include <algorithm>
#include <utility>

#include "sched/dependencies.h"
#include "sched/job_request.h"

namespace gleaner::cluster {

using store::JobState;

namespace {

// What a dependency of `kind` on a job now in `state` still waits for ("end",
// "succeed", "fail"); nullopt when it is met, "" when it never will be.
std::optional<std::string> Unmet(sched::DependencyKind kind, JobState state) {
  const bool ended = store::IsFinal(state);
  const bool succeeded = state == JobState::kSucceeded;
  switch (kind) {
    case sched::DependencyKind::kAfterOk:
      if (succeeded) return std::nullopt;
      return ended ? "" : "succeed";
    case sched::DependencyKind::kAfterAny:
      if (ended) return std::nullopt;
      return "end";
    case sched::DependencyKind::kAfterNotOk:
      if (ended && !succeeded) return std::nullopt;
      return ended ? "" : "fail";
  }
  return "";
}

}  // namespace

std::vector<store::JobRecord> QueueFeed::Sync(const std::vector<store::JobRecord>& active,
                                              const Log& log) {
  waits_.clear();
  auto queued = jobs_.List({JobState::kQueued});
  if (!queued.ok()) {
    log("jobs: " + queued.status().message());
    return {};
  }
  std::map<sched::JobId, int64_t> tasks_in_play;  // per array: running, or with the scheduler
  for (const store::JobRecord& j : active) {
    if (j.array_id) ++tasks_in_play[*j.array_id];
  }
  for (const store::JobRecord& j : *queued) {
    if (j.array_id && pending_.contains(j.id)) ++tasks_in_play[*j.array_id];
  }
  // Every dependency of the jobs the scheduler does not hold yet, in one
  // read: a thousand tasks waiting on one job read it once.
  std::set<sched::JobId> deps;
  for (const store::JobRecord& j : *queued) {
    if (!pending_.contains(j.id)) {
      for (const sched::Dependency& d : sched::DependenciesOf(j.spec)) deps.insert(d.job);
    }
  }
  auto dep_states = jobs_.StatesOf(deps);
  if (!dep_states.ok()) {
    log("jobs: " + dep_states.status().message());
    return {};
  }
  // Singletons: per user and name, the jobs not ended, oldest first; held
  // ones and those waiting for an approver too (as Slurm's singleton
  // waits for every earlier job of the name that has not terminated), read
  // only while a singleton waits.
  std::map<std::pair<uint32_t, std::string>, std::set<sched::JobId>> named;
  std::vector<store::JobRecord> stopped;
  if (std::any_of(queued->begin(), queued->end(), [this](const store::JobRecord& j) {
        return j.spec.singleton && !pending_.contains(j.id);
      })) {
    auto held = jobs_.List({JobState::kHeld, JobState::kPendingApproval});
    if (!held.ok()) {
      log("jobs: " + held.status().message());
      return {};
    }
    stopped = std::move(held).value();
  }
  for (const std::vector<store::JobRecord>* jobs :
       {&active, &std::as_const(*queued), &std::as_const(stopped)}) {
    for (const store::JobRecord& j : *jobs) {
      if (!j.spec.name.empty()) named[{j.uid, j.spec.name}].insert(j.id);
    }
  }
  std::set<sched::JobId> still_queued;
  for (const store::JobRecord& j : *queued) {
    still_queued.insert(j.id);
    if (pending_.contains(j.id)) continue;  // the scheduler has it
    std::string blocked_by;                 // a dependency not met yet
    std::string doomed;                     // one that never will be
    for (const sched::Dependency& dep : sched::DependenciesOf(j.spec)) {
      const auto d = dep_states->find(dep.job);
      const std::string name = "job " + std::to_string(dep.job);
      if (d == dep_states->end()) {
        doomed = name + " does not exist";
      } else if (const auto left = Unmet(dep.kind, d->second); left && left->empty()) {
        doomed = name + " " + std::string(store::JobStateName(d->second)) +
                 (dep.kind == sched::DependencyKind::kAfterOk
                      ? ""
                      : " (" + std::string(sched::DependencyKindName(dep.kind)) + ")");
      } else if (left && blocked_by.empty()) {
        blocked_by = "waiting for " + name + " to " + *left;
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
    if (blocked_by.empty() && j.spec.singleton) {
      const std::set<sched::JobId>& same = named[{j.uid, j.spec.name}];
      if (!same.empty() && *same.begin() < j.id) {
        blocked_by = "waiting for job " + std::to_string(*same.begin()) + ", also named \"" +
                     j.spec.name + "\", to end (singleton)";
      }
    }
    if (!blocked_by.empty()) {
      waits_[j.id] = blocked_by;
      continue;
    }
    if (j.array_id && j.spec.array && j.spec.array->max_parallel > 0) {
      int64_t& in_play = tasks_in_play[*j.array_id];
      if (in_play >= j.spec.array->max_parallel) {
        waits_[j.id] = "array " + std::to_string(*j.array_id) + " runs at most " +
                       std::to_string(j.spec.array->max_parallel) + " tasks at once";
        // A task requeued after a preemption is back in the scheduler's
        // queue: over the cap, it must leave it until a slot frees.
        if (scheduler_.Phase(j.id) == sched::JobPhase::kPending)
          tell_(sched::JobCancelled{j.id}, log);
        continue;
      }
      ++in_play;
    }
    // A job requeued after a preemption is pending with the scheduler
    // already; any other queued job is new to it.
    if (scheduler_.Phase(j.id) == sched::JobPhase::kUnknown) {
      tell_(sched::JobSubmitted{sched::RequestFromSpec(j.id, j.spec, j.user, runtimes_)}, log);
    }
    pending_.insert(j.id);
  }
  // Held or cancelled while they waited: out of the scheduler's queue.
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (still_queued.contains(*it)) {
      ++it;
      continue;
    }
    if (scheduler_.Phase(*it) == sched::JobPhase::kPending) tell_(sched::JobCancelled{*it}, log);
    it = pending_.erase(it);
  }
  return std::move(queued).value();
}

void QueueFeed::Pass(const std::vector<store::JobRecord>& active,
                     std::vector<sched::Action>& decided,
                     const std::function<void(const sched::Action&)>& carry, const Log& log) {
  const std::vector<store::JobRecord> queued = Sync(active, log);
  tell_(sched::Tick{}, log);
  std::vector<sched::Action> now;
  now.swap(decided);
  for (const sched::Action& a : now) carry(a);
  SayWhyTheyWait(queued, log);
}

void QueueFeed::SayWhyTheyWait(const std::vector<store::JobRecord>& queued, const Log& log) {
  std::vector<std::pair<sched::JobId, std::string>> changed;
  for (const store::JobRecord& j : queued) {
    std::string reason;
    if (auto wait = waits_.find(j.id); wait != waits_.end()) {
      reason = wait->second;
    } else if (auto pending = scheduler_.PendingReason(j.id); pending.ok()) {
      reason = *pending;
    }
    if (!reason.empty() && reason != j.reason) changed.emplace_back(j.id, std::move(reason));
  }
  if (auto s = jobs_.Annotate(changed, JobState::kQueued); !s.ok()) log("jobs: " + s.message());
}

void QueueFeed::Requeued(sched::JobId id) {
  // The store requeued it when it left; Sync may have withdrawn it since
  // (held, cancelled, over its array's cap).
  if (scheduler_.Phase(id) == sched::JobPhase::kPending) pending_.insert(id);
}

}  // namespace gleaner::cluster
