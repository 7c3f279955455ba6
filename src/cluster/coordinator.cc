#include "cluster/coordinator.h"

#include <exception>
#include <span>

#include "cluster/job_exit.h"
#include "core/format.h"
#include "core/version.h"

namespace gleaner::cluster {

using store::JobState;

namespace {

// Beyond the lease and a job's grace: how long the coordinator waits for a
// lost host's agent to have killed a job before it requeues it. An agent
// checks its lease once a pass, and a pass cut off from every coordinator
// takes the interval plus 2 s per coordinator it tries: three passes' slack.
constexpr core::Duration kStopMargin = core::Seconds(15);

// Submit to start: tenths of a second for a free cluster to days for a
// backlog.
std::vector<double> LatencyBounds() {
  return {0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600.0, 86400};
}

}  // namespace

Coordinator::Coordinator(store::Store& store, const core::Clock& clock, CoordinatorOptions options,
                         const Log& log, store::ObservationStore* reports)
    : clock_(clock),
      options_(std::move(options)),
      leader_since_(clock_.Now()),
      start_latency_(LatencyBounds()),
      reports_(reports == nullptr
                   ? nullptr
                   : std::make_unique<ReportWriter>(*reports, options_.project_of_user, log)),
      store_(&store),
      hosts_(options_.max_gpus_per_host),
      scheduler_(options_.scheduler),
      queue_(
          store, scheduler_,
          [this](const sched::Event& e, const Log& l) {
            mu_.AssertHeld();  // the feed is called only under the lock
            Tell(e, l);
          },
          &runtimes_),
      housekeeping_(options_.approval_timeout, options_.history_retention) {
  core::MutexLock lock(mu_);
  // Which host each known GPU is on: running jobs name only their GPUs.
  if (auto gpus = store_->Gpus(); gpus.ok()) {
    hosts_.Remember(*gpus);
  } else {
    log("gpus: " + gpus.status().message());
  }
  ReadRuntimes(log);
  std::vector<store::JobRecord> active;
  if (ReadActive(&active, log)) {
    for (const auto& [name, host] : hosts_.all()) {
      log("host " + name + " holds " + std::to_string(host.jobs.size()) +
          " job(s); waiting for its agent to report");
    }
  }
}

core::Result<AgentReply> Coordinator::HandleReport(const std::string& agent,
                                                   const AgentReport& report, const Log& log) {
  if (report.protocol < kOldestProtocolVersion || report.protocol > kProtocolVersion) {
    return core::FailedPrecondition(
        "agent " + agent + " speaks protocol " + std::to_string(report.protocol) +
        "; this coordinator (gleaner " + std::string(core::Version()) + ") speaks " +
        std::to_string(kOldestProtocolVersion) + " to " + std::to_string(kProtocolVersion) + ": " +
        (report.protocol > kProtocolVersion ? "upgrade the coordinators first"
                                            : "upgrade the agent"));
  }
  core::MutexLock lock(mu_);
  const core::TimePoint now = clock_.Now();
  Host& host = hosts_.Heard(agent, now, log);
  // What only the store keeps of the report is written once the lock is
  // released: no tick and no other report waits for it.
  std::vector<store::GpuRecord> gpu_records;
  if (report.inventory) {
    const core::Result<bool> changed = hosts_.LearnInventory(
        agent, host, *report.inventory, report.rack, report.host, now, &gpu_records, log);
    if (!changed.ok()) {
      // What it reports now cannot be matched to the GPUs it joined with:
      // none is lent to anyone new until that is settled (its jobs keep
      // theirs), as for a pass that read no GPU. The host is alive.
      host.blind = true;
      host.inventory_refused = changed.status().message();
      return changed.status();
    }
    host.inventory_refused.clear();
    if (*changed && host.in_scheduler) {  // a GPU came or went, or its rack: placed anew
      Tell(sched::NodeLost{core::NodeId(agent), "its GPUs or rack changed"}, log);
      host.in_scheduler = false;
    }
  }
  host.running = {report.running.begin(), report.running.end()};
  // A pass that read no GPU (the driver failed) says nothing of them: as
  // for a silent host, they are lent to no one new until a pass reads them
  // again, and the jobs there keep them.
  host.blind = report.gpus.size() != host.gpus.size();
  if (!host.blind) host.status = report.gpus;
  for (const auto& [at, why] : report.reasons) {
    if (at >= 0 && static_cast<size_t>(at) < host.reasons.size()) {
      host.reasons[static_cast<size_t>(at)] = why;
    }
  }
  for (const auto& [at, detail] : report.details) {
    if (at >= 0 && static_cast<size_t>(at) < host.details.size()) {
      host.details[static_cast<size_t>(at)] = detail;
    }
  }
  // A host's minutes are kept for its own GPUs only.
  std::vector<observe::MinuteRollup> minutes;
  for (const observe::MinuteRollup& m : report.minutes) {
    const std::string* owner = hosts_.NameOf(m.uuid);
    if (owner != nullptr && *owner == agent) minutes.push_back(m);
  }
  int64_t acked = 0;
  std::set<JobAttempt> ended;  // not to be started again by this reply
  for (const JobEvent& e : report.events) {
    if (e.kind == JobEvent::Kind::kExited) ended.insert(e.of);
    if (auto s = Apply(agent, host, e, log); !s.ok()) {
      log("host " + agent + ": event " + std::to_string(e.seq) + ": " + s.message());
      // The store is away: the agent sends it, and the rest, again. Any
      // other error would recur forever: it is said and passed over.
      if (s.code() == core::StatusCode::kUnavailable) break;
    }
    acked = std::max(acked, e.seq);
  }
  AgentReply reply = ReplyTo(agent, host, report, ended);
  reply.acked = acked;
  // What runs there but ended in the store (cancelled by its owner, or past
  // its max_runtime) is killed now, with the reason. Only jobs that left
  // this host are looked up: an agent's word alone costs no store read.
  std::set<sched::JobId> still_running;
  for (const JobAttempt& of : report.running) {
    if (!host.left.contains(of.job)) continue;
    still_running.insert(of.job);
    if (ended.contains(of)) continue;
    auto job = store_->Get(of.job);
    if (job.ok() && job->attempts == of.attempt && store::IsFinal(job->state)) {
      reply.cancel.push_back({of, job->reason});
    }
  }
  std::erase_if(host.left, [&](sched::JobId id) { return !still_running.contains(id); });
  reply.orders = host.orders;
  // A coordinator that just took over knows the host's jobs (from the
  // store) but not its GPUs: the reply still says what the host runs.
  reply.send_inventory = host.gpus.empty() || host.blind;
  logs_.Exchange(agent, report.logs, reply, calls_);
  reply.holders = holder_asks_.Take(agent);
  const ReportWrites writes{report.run, std::move(gpu_records), std::move(minutes)};
  if (reports_ == nullptr) {  // one connection: the tick's, under the lock
    GLEANER_RETURN_IF_ERROR(
        ReportWriter::WriteBatch(*store_, {&writes}, options_.project_of_user, log).front());
  }
  const auto calls = calls_.Take();
  lock.Unlock();
  DeferredCalls::RunAll(calls);
  if (reports_ != nullptr) GLEANER_RETURN_IF_ERROR(reports_->Write(writes));
  return reply;
}

AgentReply Coordinator::ReplyTo(const std::string& name, const Host& host,
                                const AgentReport& report,
                                const std::set<JobAttempt>& ended) const {
  AgentReply reply;
  reply.lease = options_.requeue_after;
  const std::set<JobAttempt> running(report.running.begin(), report.running.end());
  for (const auto& [id, job] : host.jobs) {
    const JobAttempt of{id, job.attempts};
    // A gang's member that ended here waits, not running, for the rest.
    if (auto end = gang_ends_.find(id); end != gang_ends_.end() &&
                                        end->second.attempt == job.attempts &&
                                        end->second.ended.contains(name)) {
      continue;
    }
    reply.assigned.push_back(of);
    if (job.state == JobState::kRunning && !running.contains(of) && !ended.contains(of)) {
      JobToStart start{of,
                       job.user,
                       job.spec,
                       job.gpus,
                       job.array_id,
                       job.array_index,
                       options_.agent_in_process ? std::optional(job.uid) : std::nullopt,
                       std::nullopt};
      if (job.spec.nodes > 1) {
        const std::vector<std::string> hosts = hosts_.HostsOf(job);
        std::erase_if(start.gpus, [&](const core::GpuUuid& g) {
          mu_.AssertHeld();
          const std::string* at = hosts_.NameOf(g);
          return at == nullptr || *at != name;
        });
        const auto rank = std::find(hosts.begin(), hosts.end(), name) - hosts.begin();
        start.gang = GangRole{static_cast<int>(rank), hosts, job.spec.gpus, GangPort(id)};
      }
      reply.start.push_back(std::move(start));
    }
    if (auto p = preempting_.find(id); p != preempting_.end())
      reply.preempt.push_back({of, p->second});
  }
  return reply;
}

bool Coordinator::MemberGone(const std::string& name, const store::JobRecord& job) const {
  const Host* host = hosts_.Find(name);
  return host != nullptr && host->reported && job.started_at && *job.started_at < leader_since_ &&
         !host->running.contains({job.id, job.attempts});
}

void Coordinator::Tick(const Log& log) {
  core::MutexLock lock(mu_);
  const core::TimePoint now = clock_.Now();
  hosts_.JudgeLiveness(now, options_.silent_after, options_.requeue_after, log);
  for (auto& [name, host] : hosts_.all()) {
    if (host.lost) RequeueStopped(name, host, now - host.heard, log);
  }
  logs_.Expire(now, calls_);
  housekeeping_.Tick(*store_, now, log);
  std::vector<store::JobRecord> active;
  if (ReadActive(&active, log)) {
    TellGpus(log);
    if (hosts_.Settled(now, leader_since_, options_.silent_after, log)) {
      if (options_.shadow) shadow_.BeginPass(clock_.Now(), log);
      queue_.Pass(
          active, decided_,
          [&](const sched::Action& a) {
            mu_.AssertHeld();
            Carry(a, log);
          },
          log);
    }
  }
  const auto calls = calls_.Take();
  lock.Unlock();
  DeferredCalls::RunAll(calls);
}

void Coordinator::WaitForOrders(const std::string& agent, uint64_t seen,
                                std::function<void(uint64_t)> wake) {
  core::MutexLock lock(mu_);
  const Host* host = hosts_.Find(agent);
  waiters_.Wait(agent, host == nullptr ? 0 : host->orders, seen, std::move(wake), calls_);
  const auto calls = calls_.Take();
  lock.Unlock();
  DeferredCalls::RunAll(calls);
}

void Coordinator::ReadLog(const store::JobRecord& job, bool err, uint64_t offset,
                          std::function<void(core::Result<LogChunk>)> answer) {
  core::MutexLock lock(mu_);
  // Where its first GPU is: the host, or a gang's rank 0.
  const std::string* where = job.gpus.empty() ? nullptr : hosts_.NameOf(job.gpus.front());
  Host* host = where == nullptr ? nullptr : hosts_.Find(*where);
  core::Status asked = core::Status::Ok();
  if (where == nullptr) {
    if (job.gpus.empty()) {  // never started: nothing written yet
      lock.Unlock();
      answer(LogChunk{0, "", offset, ""});
      return;
    }
    asked = core::NotFound(Job(job.id) + " ran on GPUs no agent reports to this coordinator");
  } else if (host == nullptr || !host->Reporting()) {
    asked =
        core::Unavailable("host " + *where + ", where " + Job(job.id) +
                          " ran, is not reporting; its log is in the agent's DATA_DIR/logs there");
  } else {
    asked = logs_.Ask(*where, job.id, err, offset, answer, clock_.Now());
    if (asked.ok()) NewOrders(*where, *host);
  }
  const auto calls = calls_.Take();
  lock.Unlock();
  DeferredCalls::RunAll(calls);
  if (!asked.ok()) answer(std::move(asked));
}

core::Result<int64_t> Coordinator::AcceptHostGpus(const std::string& name, const Log& log) {
  core::MutexLock lock(mu_);
  return hosts_.Accept(name, *store_, clock_.Now(), log);
}

core::Result<int64_t> Coordinator::ForgetHost(const std::string& name, const Log& log) {
  core::MutexLock lock(mu_);
  GLEANER_RETURN_IF_ERROR(hosts_.MayForget(name));
  GLEANER_ASSIGN_OR_RETURN(const int64_t forgotten, store_->ForgetGpus(name));
  if (const std::optional<Host> host = hosts_.Forget(name); host && host->in_scheduler) {
    Tell(sched::NodeLost{core::NodeId(name), "forgotten"}, log);
  }
  log("host " + name + " forgotten: its " + std::to_string(forgotten) +
      " GPU(s) may be reported by another host");
  return forgotten;
}

core::Status Coordinator::AskHolder(const std::string& gpu, observe::HolderAsk ask,
                                    const std::string& user, bool admin) {
  core::MutexLock lock(mu_);
  const core::GpuUuid uuid(gpu);
  const std::string* name = hosts_.NameOf(uuid);
  Host* known = name == nullptr ? nullptr : hosts_.Find(*name);
  if (known == nullptr) {
    return core::NotFound("no host reports GPU " + gpu +
                          "; give its UUID, as `gleaner gpus` shows it");
  }
  Host& host = *known;
  if (!host.Reporting()) {
    return core::Unavailable("host " + *name + ", which has GPU " + gpu + ", is not reporting");
  }
  std::set<std::string> holders;
  std::optional<observe::HolderParking> parking;
  for (size_t i = 0; i < host.gpus.size() && i < host.details.size(); ++i) {
    if (host.gpus[i].uuid != uuid || !host.details[i]) continue;
    for (const observe::ObservedProcess& p : host.details[i]->processes) {
      if (!p.gleaner_job && !p.user.empty()) holders.insert(p.user);
    }
    parking = host.details[i]->verdict.evidence.parking;
    if (parking && !parking->user.empty()) holders.insert(parking->user);
  }
  if (ask != observe::HolderAsk::kKeep &&
      (!parking || parking->phase == observe::HolderParking::Phase::kNotice)) {
    return core::NotFound("no holder is parked on GPU " + gpu);
  }
  if (!admin && observe::GivesUp(ask)) {
    return core::PermissionDenied("only root (an admin) may give up on GPU " + gpu +
                                  "'s parked holder; its user may end it, or bring it back "
                                  "with `gleaner unpark " +
                                  gpu + "`");
  }
  if (!admin && !holders.contains(user)) {
    return core::PermissionDenied("GPU " + gpu + " is not held by " + user +
                                  ": only its holder's user (or root) may keep or unpark it");
  }
  holder_asks_.Ask(*name, {uuid, ask});
  NewOrders(*name, host);
  const auto calls = calls_.Take();
  lock.Unlock();
  DeferredCalls::RunAll(calls);
  return core::Status::Ok();
}

void Coordinator::NewOrders(const std::string& name, Host& host) {
  ++host.orders;
  waiters_.Notify(name, host.orders, calls_);
}

void Coordinator::NewOrdersForJob(sched::JobId job) {
  for (auto& [name, host] : hosts_.all()) {
    if (host.jobs.contains(job)) NewOrders(name, host);
  }
}

void Coordinator::RequeueStopped(const std::string& agent, Host& host, core::Duration quiet,
                                 const Log& log) {
  std::vector<std::pair<sched::JobId, std::string>> requeued;
  for (auto it = host.jobs.begin(); it != host.jobs.end();) {
    const store::JobRecord& job = it->second;
    // The agent signalled it at the lease and killed it a grace later.
    if (quiet <= options_.requeue_after + job.spec.grace + kStopMargin) {
      ++it;
      continue;
    }
    store::JobUpdate u;
    u.reason = "host " + agent + " silent for " + core::FormatDuration(quiet) +
               "; its agent's lease ran out";
    const JobState to = job.spec.pty ? JobState::kCancelled : JobState::kQueued;
    if (job.spec.pty) u.reason = SessionEnded(u.reason);
    auto moved = store_->Transition(job.id, job.state, to, u);
    log(Job(job.id) + (moved.ok() ? (job.spec.pty ? " " : " requeued: ") + u.reason
                                  : ": " + moved.status().message()));
    preempting_.erase(job.id);
    resizing_.erase(job.id);
    gang_ends_.erase(job.id);
    requeued.emplace_back(job.id, u.reason);
    it = host.jobs.erase(it);
  }
  if (requeued.empty()) return;
  // The scheduler learns that the freed GPUs lend nothing before it frees
  // them: it must not place the jobs right back on the silent host.
  TellGpus(log);
  for (const auto& [id, reason] : requeued) ReportExit(id, false, reason, log);
}

bool Coordinator::ReadActive(std::vector<store::JobRecord>* active, const Log& log) {
  auto read = store_->List({JobState::kRunning, JobState::kVacating});
  if (!read.ok()) {
    log("jobs: " + read.status().message());
    return false;
  }
  *active = std::move(read).value();
  // The hosts that had jobs, and how many of their jobs had left before.
  std::vector<std::tuple<const std::string*, Host*, size_t>> had_jobs;
  for (auto& [name, host] : hosts_.all()) {
    if (host.jobs.empty()) continue;
    had_jobs.emplace_back(&name, &host, host.left.size());
    for (const auto& [id, job] : host.jobs) host.left.insert(id);
    host.jobs.clear();
  }
  const core::TimePoint now = clock_.Now();
  for (const store::JobRecord& j : *active) {
    // Every host holding its GPUs: one (its first GPU's), or each of a
    // gang's; a tick reads every running job, so one-node jobs look up one.
    std::vector<Host*> holders;
    const size_t looked_up = j.spec.nodes > 1 ? j.gpus.size() : std::min<size_t>(j.gpus.size(), 1);
    for (const core::GpuUuid& g : std::span(j.gpus).first(looked_up)) {
      Host* h = hosts_.OfGpu(g, now);
      if (h == nullptr) {
        holders.clear();
        break;
      }
      if (std::find(holders.begin(), holders.end(), h) == holders.end()) holders.push_back(h);
    }
    if (holders.empty()) {
      if (unplaced_said_.insert(j.id).second) {
        log(Job(j.id) + " runs on GPUs no agent has reported; it waits for its host");
      }
      continue;
    }
    if (j.state == JobState::kRunning && j.spec.max_runtime && j.started_at &&
        now - *j.started_at > *j.spec.max_runtime) {
      store::JobUpdate u;
      u.reason = "ran longer than its max_runtime of " + core::FormatDuration(*j.spec.max_runtime);
      if (store_->Transition(j.id, JobState::kRunning, JobState::kCancelled, u).ok()) {
        log(Job(j.id) + " " + u.reason);
        continue;  // no longer assigned: its agent kills it
      }
    }
    for (Host* h : holders) {
      h->jobs[j.id] = j;
      h->left.erase(j.id);
    }
  }
  for (auto [name, host, left_before] : had_jobs) {
    // A job that left (cancelled, or past its max_runtime) is killed on
    // the agent's next report: that report should come now.
    if (host->left.size() > left_before) NewOrders(*name, *host);
  }
  return true;
}

std::vector<HostView> Coordinator::Hosts(bool with_details) const {
  core::MutexLock lock(mu_);
  return hosts_.Views(with_details);
}

}  // namespace gleaner::cluster
