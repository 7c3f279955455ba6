// The Coordinator's side that faces its scheduler: what it tells the
// scheduler of each host's GPUs, and how it carries out what the scheduler
// decides (starts, preemptions, resizes, refusals; in shadow mode, only
// their record).
#include "cluster/coordinator.h"
#include "core/format.h"

namespace gleaner::cluster {

using store::JobState;

bool Coordinator::Lendable(const Host& host, size_t at) const {
  if (!host.reported || at >= host.status.size()) return false;
  const bool heard = !host.silent && !host.lost && !host.blind;
  const GpuStatus& s = host.status[at];
  const core::GpuUuid& uuid = host.gpus[at].uuid;
  for (const auto& [id, job] : host.jobs) {
    if (std::find(job.gpus.begin(), job.gpus.end(), uuid) == job.gpus.end()) continue;
    // A job this scheduler did not place holds the GPU outside its view.
    const sched::JobPhase phase = scheduler_.Phase(id);
    const bool placed = phase == sched::JobPhase::kRunning || phase == sched::JobPhase::kVacating;
    // A silent host's jobs are not preempted for its silence: they keep
    // their GPUs until the lease runs out (then they are requeued). Nor are
    // a blind host's, whose driver failed a pass.
    return placed && (!heard || s.lendable_placed);
  }
  return heard && s.lendable_free;
}

core::Bytes Coordinator::LendMemory(const Host& host, size_t at) {
  if (!host.reported || at >= host.status.size()) return core::Bytes();
  return core::Bytes::MiB(
      static_cast<uint64_t>(std::max<int64_t>(host.status[at].lend_memory_mib, 0)));
}

core::Duration Coordinator::QuietWindow(const Host& host, size_t at) {
  if (!host.reported || at >= host.status.size()) return {};
  return core::Seconds(host.status[at].quiet_p80_s);
}

void Coordinator::TellGpus(const Log& log) {
  sched::GpuVerdictsChanged changed;
  for (auto& [name, host] : hosts_.all()) {
    if (host.gpus.empty()) continue;
    if (!host.in_scheduler) {
      sched::NodeSpec node{core::NodeId(name), {}, host.rack, host.resources};
      host.told.resize(host.gpus.size());
      for (size_t i = 0; i < host.gpus.size(); ++i) {
        const InventoryGpu& g = host.gpus[i];
        const Told now{Lendable(host, i), LendMemory(host, i), QuietWindow(host, i)};
        node.gpus.push_back({g.uuid, g.index, g.model, g.memory, g.nvlink_island, now.lendable,
                             now.lend_memory, now.quiet_p80});
        host.told[i] = now;
      }
      Tell(sched::NodeAdded{std::move(node)}, log);
      host.in_scheduler = true;
      host.retell = false;
      host.told_with_jobs = !host.jobs.empty();
      AdoptRunning(name, host, log);
      continue;
    }
    // A host with jobs, or with jobs when last told, is judged every time
    // (its jobs' phases in the scheduler change what it lends); any other
    // only after a report or a change of its liveness: a tick costs the
    // hosts that changed, not every GPU of the cluster.
    if (host.jobs.empty() && !host.told_with_jobs && !host.retell) continue;
    host.retell = false;
    host.told_with_jobs = !host.jobs.empty();
    AdoptRunning(name, host, log);
    for (size_t i = 0; i < host.gpus.size(); ++i) {
      const Told now{Lendable(host, i), LendMemory(host, i), QuietWindow(host, i)};
      Told& told = host.told[i];
      if (told == now) continue;
      told = now;
      changed.changes.push_back(
          {host.gpus[i].uuid, now.lendable,
           host.silent ? "host " + name + " is silent"
           : host.blind
               ? (host.inventory_refused.empty()
                      ? "host " + name + "'s agent read no GPU in its last pass"
                      : "not lent while its host's report is refused: " + host.inventory_refused)
               : host.reasons[i],
           now.lend_memory, now.quiet_p80});
    }
  }
  if (!changed.changes.empty()) Tell(changed, log);
}

void Coordinator::AdoptRunning(const std::string& name, const Host& host, const Log& log) {
  for (const auto& [id, job] : host.jobs) {
    if (scheduler_.Phase(id) != sched::JobPhase::kUnknown || not_adopted_.contains(id)) continue;
    // A gang is adopted once the scheduler knows every node it runs on.
    const std::vector<std::string> hosts = hosts_.HostsOf(job);
    if (std::any_of(hosts.begin(), hosts.end(), [&](const std::string& h) {
          mu_.AssertHeld();
          const Host* known = hosts_.Find(h);
          return known == nullptr || !known->in_scheduler;
        })) {
      continue;
    }
    sched::JobRunning running{sched::RequestFromSpec(id, job.spec, job.user),
                              core::NodeId(hosts.empty() ? name : hosts.front()), job.gpus,
                              job.submitted_at, job.started_at.value_or(clock_.Now())};
    auto actions = scheduler_.Handle(running, clock_.Now());
    if (!actions.ok()) {
      // It keeps its GPUs outside the scheduler's view until it ends.
      not_adopted_.insert(id);
      log(Job(id) + " runs on host " + name +
          " but the scheduler cannot count it: " + actions.status().message());
      continue;
    }
    decided_.insert(decided_.end(), actions->begin(), actions->end());
  }
}

void Coordinator::Tell(const sched::Event& event, const Log& log) {
  auto actions = scheduler_.Handle(event, clock_.Now());
  if (!actions.ok()) {
    log("scheduler: " + actions.status().message());
    return;
  }
  decided_.insert(decided_.end(), actions->begin(), actions->end());
}

void Coordinator::Carry(const sched::Action& action, const Log& log) {
  if (const auto* start = std::get_if<sched::StartJob>(&action)) {
    queue_.Left(start->job);
    if (scheduler_.Phase(start->job) != sched::JobPhase::kRunning) {
      Tell(sched::JobFailed{start->job, "its GPUs were taken back before it started"}, log);
      return;
    }
    preempting_.erase(start->job);
    resizing_.erase(start->job);
    Start(*start, log);
  } else if (const auto* preempt = std::get_if<sched::PreemptJob>(&action)) {
    preempting_[preempt->job] = preempt->reason;
    NewOrdersForJob(preempt->job);
  } else if (const auto* resize = std::get_if<sched::ResizeJob>(&action)) {
    preempting_[resize->job] = resize->reason;
    resizing_[resize->job] = *resize;
    NewOrdersForJob(resize->job);
  } else if (const auto* requeue = std::get_if<sched::RequeueJob>(&action)) {
    preempting_.erase(requeue->job);
    queue_.Requeued(requeue->job);
  } else if (const auto* reject = std::get_if<sched::RejectJob>(&action)) {
    queue_.Left(reject->job);
    store::JobUpdate u;
    u.reason = "cannot run in this cluster: " + reject->reason;
    if (store_->Transition(reject->job, JobState::kQueued, JobState::kCancelled, u).ok()) {
      log(Job(reject->job) + " " + u.reason);
    }
  }
}

void Coordinator::ShadowStart(const sched::StartJob& start, const Log& log) {
  // Back to the queue, for the scheduler to place again at the next pass.
  Tell(sched::JobFailed{start.job, "shadow mode: nothing starts"}, log);
  auto job = store_->Get(start.job);
  if (!job.ok()) return;
  std::optional<core::Duration> runtime = job->spec.expected_runtime;
  if (!runtime) runtime = job->spec.max_runtime;
  if (!shadow_.WouldStart({job->id, job->user, start.node.str(), start.gpus, runtime}, clock_.Now(),
                          log)) {
    return;
  }
  std::string gpus;
  for (const core::GpuUuid& g : start.gpus) gpus += (gpus.empty() ? "" : ", ") + g.str();
  const std::string reason = "shadow mode: would run on " + gpus + " of host " + start.node.str();
  if (job->reason != reason) {
    if (auto s = store_->Annotate({{job->id, reason}}, JobState::kQueued); !s.ok()) {
      log("jobs: " + s.message());
    }
  }
}

std::optional<ShadowLedger::Totals> Coordinator::Shadow() const {
  if (!options_.shadow) return std::nullopt;
  core::MutexLock lock(mu_);
  return shadow_.Read();
}

bool Coordinator::Start(const sched::StartJob& start, const Log& log) {
  if (options_.shadow) {
    ShadowStart(start, log);
    return false;
  }
  // One host, or each of a gang's in rank order.
  std::vector<std::string> names;
  for (const core::NodeId& n : start.gang) names.push_back(n.str());
  if (names.empty()) names.push_back(start.node.str());
  std::string where;
  for (const std::string& n : names) where += (where.empty() ? "" : ", ") + n;
  const std::string hosts_word = names.size() == 1 ? "host " : "hosts ";
  store::JobUpdate u;
  u.gpus = start.gpus;
  u.started_at = clock_.Now();
  u.reason = "placed on idle GPU(s) of " + hosts_word + where;
  if (!start.why.empty()) u.reason += ": " + start.why;
  std::optional<std::string> missing;
  for (const std::string& n : names) {
    if (hosts_.Find(n) == nullptr) missing = n;
  }
  // The claim: a compare-and-set on the job and on its GPUs. A job that
  // left the queue meanwhile, or a GPU someone else holds, fails it.
  auto claimed = missing ? core::Result<store::JobRecord>(core::NotFound("no host " + *missing))
                         : store_->Transition(start.job, JobState::kQueued, JobState::kRunning, u);
  if (!claimed.ok()) {
    log(Job(start.job) + " not started: " + claimed.status().message());
    Tell(sched::JobFailed{start.job, claimed.status().message()}, log);
    return false;
  }
  for (const std::string& n : names) {
    Host& host = *hosts_.Find(n);
    host.jobs[start.job] = *claimed;
    NewOrders(n, host);
  }
  log(Job(start.job) + " assigned to " + hosts_word + where);
  return true;
}

}  // namespace gleaner::cluster
