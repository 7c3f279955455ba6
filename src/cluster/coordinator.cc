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

std::string_view HealthName(HostView::Health h) {
  switch (h) {
    case HostView::Health::kUp:
      return "up";
    case HostView::Health::kSilent:
      return "silent";
    case HostView::Health::kLost:
      return "lost";
  }
  return "?";
}

Coordinator::Coordinator(store::Store& store, const core::Clock& clock, CoordinatorOptions options,
                         const Log& log, store::ObservationStore* reports)
    : store_(store),
      reports_(reports),
      clock_(clock),
      options_(std::move(options)),
      housekeeping_(options_.approval_timeout, options_.history_retention),
      scheduler_(options_.scheduler),
      queue_(
          store_, scheduler_, [this](const sched::Event& e, const Log& l) { Tell(e, l); },
          &runtimes_),
      start_latency_(LatencyBounds()),
      leader_since_(clock_.Now()) {
  // Which host each known GPU is on: running jobs name only their GPUs.
  if (auto gpus = store_.Gpus(); gpus.ok()) {
    for (const store::GpuRecord& g : *gpus) {
      host_of_gpu_[g.uuid] = g.host;
      awaited_.insert(g.host);
    }
  } else {
    log("gpus: " + gpus.status().message());
  }
  ReadRuntimes(log);
  std::vector<store::JobRecord> active;
  if (ReadActive(&active, log)) {
    for (auto& [name, host] : hosts_) {
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
  std::unique_lock lock(mu_);
  Host& host = hosts_[agent];
  const core::TimePoint now = clock_.Now();
  if (host.silent || host.lost) {
    log("host " + agent + " reports again after " + core::FormatDuration(now - host.heard) +
        (host.lost ? " (it was lost: what was requeued stays requeued)" : ""));
  }
  host.heard = now;
  host.reported = true;
  host.silent = false;
  host.lost = false;
  host.retell = true;
  // What only the store keeps of the report is written once the lock is
  // released: no tick and no other report waits for it.
  std::vector<store::GpuRecord> gpu_records;
  if (report.inventory) {
    if (core::Status refused = LearnInventory(agent, host, *report.inventory, report.rack,
                                              report.host, &gpu_records, log);
        !refused.ok()) {
      // What it reports now cannot be matched to the GPUs it joined with:
      // none is lent to anyone new until that is settled (its jobs keep
      // theirs), as for a pass that read no GPU. The host is alive.
      host.blind = true;
      host.inventory_refused = refused.message();
      return refused;
    }
    host.inventory_refused.clear();
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
    auto owner = host_of_gpu_.find(m.uuid);
    if (owner != host_of_gpu_.end() && owner->second == agent) minutes.push_back(m);
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
    auto job = store_.Get(of.job);
    if (job.ok() && job->attempts == of.attempt && store::IsFinal(job->state)) {
      reply.cancel.push_back({of, job->reason});
    }
  }
  std::erase_if(host.left, [&](sched::JobId id) { return !still_running.contains(id); });
  reply.orders = host.orders;
  // A coordinator that just took over knows the host's jobs (from the
  // store) but not its GPUs: the reply still says what the host runs.
  reply.send_inventory = host.gpus.empty() || host.blind;
  ExchangeLogs(agent, report, &reply);
  if (auto asked = holder_requests_.extract(agent)) reply.holders = std::move(asked.mapped());
  ReportWrites writes{report.run, gpu_records, minutes, core::Status::Ok(), false};
  if (reports_ == nullptr) {  // one connection: the tick's, under the lock
    WriteReported(store_, {&writes}, log);
    GLEANER_RETURN_IF_ERROR(writes.status);
  }
  RunWakes(lock);
  if (reports_ != nullptr) GLEANER_RETURN_IF_ERROR(WriteInBatch(writes, log));
  return reply;
}

core::Status Coordinator::WriteInBatch(ReportWrites& mine, const Log& log) {
  std::unique_lock lock(reports_mu_);
  to_write_.push_back(&mine);
  while (!mine.done) {
    if (writing_) {
      reports_written_.wait(lock);
      continue;
    }
    // No batch under way: this report writes what every report queued so
    // far, its own among them, while the next ones queue.
    std::vector<ReportWrites*> batch;
    batch.swap(to_write_);
    writing_ = true;
    lock.unlock();
    try {
      WriteReported(*reports_, batch, log);
    } catch (const std::exception& e) {
      // The batch learns why, and the next one can proceed: a batch left
      // "under way" would stall every later report.
      for (ReportWrites* w : batch) {
        w->status = core::Internal(std::string("storing the report failed: ") + e.what());
      }
    }
    lock.lock();
    writing_ = false;
    for (ReportWrites* w : batch) w->done = true;
    reports_written_.notify_all();
  }
  return mine.status;
}

void Coordinator::WriteReported(store::ObservationStore& to,
                                const std::vector<ReportWrites*>& batch, const Log& log) {
  std::vector<store::GpuRecord> gpus;
  for (const ReportWrites* w : batch) gpus.insert(gpus.end(), w->gpus.begin(), w->gpus.end());
  if (!gpus.empty()) {
    if (auto s = to.SaveGpus(gpus); !s.ok()) log("gpus: " + s.message());
  }
  // The cluster's usage profiles grow from the same minutes; a minute sent
  // again (the agent heard no answer) counts once. One transaction for the
  // batch: 10,000 agents send theirs within a second of each minute.
  std::vector<store::AgentMinutes> minutes;
  for (const ReportWrites* w : batch) {
    if (!w->minutes.empty()) minutes.push_back({w->run, w->minutes});
  }
  if (minutes.empty()) return;
  const core::Status added = to.AddAgentMinutes(minutes, options_.project_of_user).status();
  for (ReportWrites* w : batch) {
    if (!w->minutes.empty()) w->status = added;
  }
}

core::Status Coordinator::LearnInventory(const std::string& agent, Host& host,
                                         std::vector<InventoryGpu> gpus, const std::string& rack,
                                         const sched::HostResources& resources,
                                         std::vector<store::GpuRecord>* records, const Log& log) {
  if (gpus == host.gpus && rack == host.rack) {
    // Only its CPUs or memory changed (an agent upgraded or reconfigured):
    // never a reason to requeue its running jobs. The node keeps the size
    // it was placed with until it is placed anew.
    if (resources != host.resources) {
      host.resources = resources;
      if (host.in_scheduler)
        log("host " + agent + " reports another size; it counts from its next placement");
    }
    return core::Status::Ok();
  }
  if (options_.max_gpus_per_host > 0 && gpus.size() > options_.max_gpus_per_host) {
    return core::PermissionDenied("host " + agent + " reports " + std::to_string(gpus.size()) +
                                  " GPUs, more than the " +
                                  std::to_string(options_.max_gpus_per_host) +
                                  " one host may have here (gleaner server --max-gpus-per-host)");
  }
  // A GPU is the host's that reported it first, as the store remembers
  // across restarts and failovers: no agent takes another host's, even one
  // that has not reported since, or whose agent is gone (it would receive
  // the jobs placed there, and their users' environments). Only root moves
  // one (ForgetHost).
  for (const InventoryGpu& g : gpus) {
    auto owner = host_of_gpu_.find(g.uuid);
    if (owner == host_of_gpu_.end() || owner->second == agent) continue;
    return core::PermissionDenied(
        "GPU " + g.uuid.str() + " is already reported by host " + owner->second +
        ": a GPU stays with the host that reported it first (one agent per host, and simulated "
        "GPUs need UUIDs of their own). If it moved to " +
        agent + ", an admin releases it on a coordinator: gleaner host forget " + owner->second);
  }
  // The GPUs a host joins with are its own; one it reports later waits for
  // root. Otherwise an agent could add GPUs it does not have, up to the
  // limit, and receive the jobs placed there with their users' environments.
  std::vector<InventoryGpu> fresh;
  for (const InventoryGpu& g : gpus) {
    if (!host_of_gpu_.contains(g.uuid)) fresh.push_back(g);
  }
  // (A scan of every GPU, only when one is new: at a host's first join.)
  if (!fresh.empty() && std::any_of(host_of_gpu_.begin(), host_of_gpu_.end(),
                                    [&](const auto& o) { return o.second == agent; })) {
    std::string named;
    for (const InventoryGpu& g : fresh) named += (named.empty() ? "" : ", ") + g.uuid.str();
    if (host.unaccepted != fresh) {
      log("host " + agent + " reports " + std::to_string(fresh.size()) +
          " GPU(s) it did not join with (" + named +
          "); refused until root accepts them: " + "gleaner host accept " + agent);
    }
    host.unaccepted = std::move(fresh);
    return core::PermissionDenied(
        "host " + agent + " reports " + std::to_string(host.unaccepted.size()) +
        " GPU(s) it did not join with (" + named +
        "): new GPUs wait for an admin, who accepts them on a coordinator: gleaner host accept " +
        agent);
  }
  host.unaccepted.clear();
  if (host.in_scheduler) {  // a GPU came or went, or its rack: the node is placed anew
    Tell(sched::NodeLost{core::NodeId(agent), "its GPUs or rack changed"}, log);
    host.in_scheduler = false;
  }
  host.rack = rack;
  host.resources = resources;
  const core::TimePoint now = clock_.Now();
  for (const InventoryGpu& g : gpus) {
    host_of_gpu_[g.uuid] = agent;
    records->push_back(
        {g.uuid, agent, static_cast<uint32_t>(g.index), g.model, g.memory, now, now});
  }
  log("host " + agent + " has " + std::to_string(gpus.size()) + " GPU(s)" +
      (rack.empty() ? "" : " in rack " + rack));
  host.status.assign(gpus.size(), GpuStatus{});
  host.reasons.assign(gpus.size(), "");
  host.details.assign(gpus.size(), std::nullopt);
  host.gpus = std::move(gpus);
  return core::Status::Ok();
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
        const std::vector<std::string> hosts = HostsOf(job);
        std::erase_if(start.gpus, [&](const core::GpuUuid& g) {
          const auto at = host_of_gpu_.find(g);
          return at == host_of_gpu_.end() || at->second != name;
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

std::vector<std::string> Coordinator::HostsOf(const store::JobRecord& job) const {
  std::vector<std::string> names;
  for (const core::GpuUuid& g : job.gpus) {
    const auto at = host_of_gpu_.find(g);
    if (at == host_of_gpu_.end()) return {};
    if (std::find(names.begin(), names.end(), at->second) == names.end()) {
      names.push_back(at->second);
    }
  }
  return names;
}

bool Coordinator::OnHost(const std::string& name, const store::JobRecord& job) const {
  return std::any_of(job.gpus.begin(), job.gpus.end(), [&](const core::GpuUuid& g) {
    const auto at = host_of_gpu_.find(g);
    return at != host_of_gpu_.end() && at->second == name;
  });
}

bool Coordinator::MemberGone(const std::string& name, const store::JobRecord& job) const {
  const auto host = hosts_.find(name);
  return host != hosts_.end() && host->second.reported && job.started_at &&
         *job.started_at < leader_since_ && !host->second.running.contains({job.id, job.attempts});
}

Coordinator::Host* Coordinator::HostOfGpu(const core::GpuUuid& gpu) {
  auto name = host_of_gpu_.find(gpu);
  if (name == host_of_gpu_.end()) return nullptr;
  // A host first met through its jobs has until now + the lease to report.
  auto [host, added] = hosts_.try_emplace(name->second);
  if (added) host->second.heard = clock_.Now();
  return &host->second;
}

void Coordinator::Tick(const Log& log) {
  std::unique_lock lock(mu_);
  JudgeLiveness(log);
  ExpireLogRequests();
  housekeeping_.Tick(store_, clock_.Now(), log);
  std::vector<store::JobRecord> active;
  if (ReadActive(&active, log)) {
    TellGpus(log);
    if (Settled(log)) {
      if (options_.shadow) shadow_.BeginPass(clock_.Now(), log);
      queue_.Pass(
          active, decided_, [&](const sched::Action& a) { Carry(a, log); }, log);
    }
  }
  RunWakes(lock);
}

bool Coordinator::Settled(const Log& log) {
  if (awaited_.empty()) return true;
  std::erase_if(awaited_, [&](const std::string& name) {
    const auto host = hosts_.find(name);
    // Heard, with its GPUs: a host's first report to a new leader may
    // carry none (the leader asks for them).
    return host != hosts_.end() && host->second.reported && !host->second.gpus.empty();
  });
  if (awaited_.empty()) return true;
  if (clock_.Now() - leader_since_ <= options_.silent_after) return false;
  std::string names;
  for (const std::string& n : awaited_) names += (names.empty() ? "" : ", ") + n;
  log("placing jobs without host(s) " + names + ", silent since this coordinator began to lead");
  awaited_.clear();
  return true;
}

void Coordinator::WaitForOrders(const std::string& agent, uint64_t seen,
                                std::function<void(uint64_t)> wake) {
  std::unique_lock lock(mu_);
  const auto host = hosts_.find(agent);
  const uint64_t now = host == hosts_.end() ? 0 : host->second.orders;
  if (now > seen) {
    lock.unlock();
    wake(now);
    return;
  }
  std::function<void(uint64_t)>& waiter = waiters_[agent];
  if (waiter) wakes_.push_back([old = std::move(waiter), now] { old(now); });
  waiter = std::move(wake);
  RunWakes(lock);
}

namespace {

// How long a log request waits for the host's answer; a host has at most
// this many requests open, and a reply asks for at most this many.
constexpr core::Duration kLogWait = core::Seconds(10);
constexpr size_t kMaxLogRequestsPerHost = 16;
constexpr size_t kMaxLogRequestsPerReply = 4;

}  // namespace

void Coordinator::ReadLog(const store::JobRecord& job, bool err, uint64_t offset,
                          std::function<void(core::Result<LogChunk>)> answer) {
  std::unique_lock lock(mu_);
  // Where its first GPU is: the host, or a gang's rank 0.
  std::string where;
  if (!job.gpus.empty()) {
    if (auto at = host_of_gpu_.find(job.gpus.front()); at != host_of_gpu_.end()) where = at->second;
  }
  const auto refuse = [&](core::Status why) {
    lock.unlock();
    answer(std::move(why));
  };
  if (where.empty()) {
    if (job.gpus.empty()) {  // never started: nothing written yet
      lock.unlock();
      answer(LogChunk{0, "", offset, ""});
      return;
    }
    return refuse(
        core::NotFound(Job(job.id) + " ran on GPUs no agent reports to this coordinator"));
  }
  const auto known = hosts_.find(where);
  if (known == hosts_.end() || !known->second.reported || known->second.silent ||
      known->second.lost) {
    return refuse(
        core::Unavailable("host " + where + ", where " + Job(job.id) +
                          " ran, is not reporting; its log is in the agent's DATA_DIR/logs there"));
  }
  size_t open = 0;
  for (const auto& [id, p] : pending_logs_) open += p.host == where ? 1u : 0u;
  if (open >= kMaxLogRequestsPerHost) {
    return refuse(core::ResourceExhausted("host " + where +
                                          " has 16 log requests open already; try again shortly"));
  }
  const uint64_t id = next_log_id_++;
  pending_logs_[id] = {where, {id, job.id, err, offset}, std::move(answer), clock_.Now()};
  NewOrders(where, known->second);
  RunWakes(lock);
}

core::Result<int64_t> Coordinator::AcceptHostGpus(const std::string& name, const Log& log) {
  std::unique_lock lock(mu_);
  const auto it = hosts_.find(name);
  if (it == hosts_.end() || it->second.unaccepted.empty()) {
    return core::FailedPrecondition("host " + name +
                                    " has no new GPUs waiting: they wait here once its agent "
                                    "reports them to this coordinator");
  }
  Host& host = it->second;
  const core::TimePoint now = clock_.Now();
  std::vector<store::GpuRecord> records;
  std::string named;
  for (const InventoryGpu& g : host.unaccepted) {
    if (host_of_gpu_.contains(g.uuid)) continue;  // another host's since: stays so
    records.push_back({g.uuid, name, static_cast<uint32_t>(g.index), g.model, g.memory, now, now});
    named += (named.empty() ? "" : ", ") + g.uuid.str();
  }
  GLEANER_RETURN_IF_ERROR(store_.SaveGpus(records));
  for (const store::GpuRecord& r : records) host_of_gpu_[r.uuid] = name;
  host.unaccepted.clear();
  log("host " + name + ": " + std::to_string(records.size()) + " new GPU(s) accepted" +
      (named.empty() ? "" : " (" + named + ")"));
  return static_cast<int64_t>(records.size());
}

core::Result<int64_t> Coordinator::ForgetHost(const std::string& name, const Log& log) {
  std::unique_lock lock(mu_);
  const auto it = hosts_.find(name);
  if (it != hosts_.end()) {
    const Host& host = it->second;
    if (!host.jobs.empty()) {
      return core::FailedPrecondition("host " + name + " holds " +
                                      std::to_string(host.jobs.size()) +
                                      " job(s): cancel them, or wait until they end");
    }
    if (host.reported && !host.silent && !host.lost) {
      return core::FailedPrecondition(
          "host " + name + " reports now: stop its agent first (systemctl stop gleaner-agent)");
    }
  }
  GLEANER_ASSIGN_OR_RETURN(const int64_t forgotten, store_.ForgetGpus(name));
  std::erase_if(host_of_gpu_, [&](const auto& gpu) { return gpu.second == name; });
  if (it != hosts_.end()) {
    if (it->second.in_scheduler) Tell(sched::NodeLost{core::NodeId(name), "forgotten"}, log);
    hosts_.erase(it);
  }
  awaited_.erase(name);
  log("host " + name + " forgotten: its " + std::to_string(forgotten) +
      " GPU(s) may be reported by another host");
  return forgotten;
}

core::Status Coordinator::AskHolder(const std::string& gpu, observe::HolderAsk ask,
                                    const std::string& user, bool admin) {
  std::unique_lock lock(mu_);
  const core::GpuUuid uuid(gpu);
  const auto at = host_of_gpu_.find(uuid);
  const auto known = at == host_of_gpu_.end() ? hosts_.end() : hosts_.find(at->second);
  if (known == hosts_.end()) {
    return core::NotFound("no host reports GPU " + gpu +
                          "; give its UUID, as `gleaner gpus` shows it");
  }
  Host& host = known->second;
  if (!host.reported || host.silent || host.lost) {
    return core::Unavailable("host " + known->first + ", which has GPU " + gpu +
                             ", is not reporting");
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
  std::vector<HolderRequest>& asked = holder_requests_[known->first];
  // One standing request per GPU: asking again changes nothing.
  if (std::find(asked.begin(), asked.end(), HolderRequest{uuid, ask}) == asked.end()) {
    asked.push_back({uuid, ask});
  }

  NewOrders(known->first, host);
  RunWakes(lock);
  return core::Status::Ok();
}

void Coordinator::ExchangeLogs(const std::string& agent, const AgentReport& report,
                               AgentReply* reply) {
  for (const LogChunk& chunk : report.logs) {
    const auto pending = pending_logs_.find(chunk.id);
    if (pending == pending_logs_.end() || pending->second.host != agent) continue;
    core::Result<LogChunk> got =
        chunk.error.empty() ? core::Result<LogChunk>(chunk)
                            : core::Result<LogChunk>(
                                  core::FailedPrecondition("host " + agent + ": " + chunk.error));
    wakes_.push_back(
        [answer = std::move(pending->second.answer), got = std::move(got)] { answer(got); });
    pending_logs_.erase(pending);
  }
  for (const auto& [id, p] : pending_logs_) {
    if (p.host == agent && reply->logs.size() < kMaxLogRequestsPerReply) {
      reply->logs.push_back(p.request);
    }
  }
}

void Coordinator::ExpireLogRequests() {
  const core::TimePoint now = clock_.Now();
  for (auto it = pending_logs_.begin(); it != pending_logs_.end();) {
    if (now - it->second.asked <= kLogWait) {
      ++it;
      continue;
    }
    wakes_.push_back([answer = std::move(it->second.answer), host = it->second.host] {
      answer(core::Unavailable("host " + host + " did not send the log within 10 s"));
    });
    it = pending_logs_.erase(it);
  }
}

void Coordinator::NewOrders(const std::string& name, Host& host) {
  ++host.orders;
  const auto waiter = waiters_.find(name);
  if (waiter == waiters_.end()) return;
  wakes_.push_back([wake = std::move(waiter->second), orders = host.orders] { wake(orders); });
  waiters_.erase(waiter);
}

void Coordinator::NewOrdersForJob(sched::JobId job) {
  for (auto& [name, host] : hosts_) {
    if (host.jobs.contains(job)) NewOrders(name, host);
  }
}

void Coordinator::RunWakes(std::unique_lock<std::mutex>& lock) {
  std::vector<std::function<void()>> wakes;
  wakes.swap(wakes_);
  lock.unlock();
  for (const auto& wake : wakes) wake();
}

void Coordinator::JudgeLiveness(const Log& log) {
  const core::TimePoint now = clock_.Now();
  for (auto& [name, host] : hosts_) {
    const core::Duration quiet = now - host.heard;
    if (!host.silent && quiet > options_.silent_after) {
      host.silent = true;
      host.retell = true;
      log("host " + name + " silent for " + core::FormatDuration(quiet) +
          ": its GPUs are unknown and lent to no one");
    }
    if (!host.lost && quiet > options_.requeue_after) {
      host.lost = true;
      host.retell = true;
      log("host " + name + " lost: silent for " + core::FormatDuration(quiet) +
          "; its agent is stopping its jobs, which are requeued once their grace has passed");
    }
    if (host.lost) RequeueStopped(name, host, quiet, log);
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
    auto moved = store_.Transition(job.id, job.state, to, u);
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
  auto read = store_.List({JobState::kRunning, JobState::kVacating});
  if (!read.ok()) {
    log("jobs: " + read.status().message());
    return false;
  }
  *active = std::move(read).value();
  // The hosts that had jobs, and how many of their jobs had left before.
  std::vector<std::tuple<const std::string*, Host*, size_t>> had_jobs;
  for (auto& [name, host] : hosts_) {
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
      Host* h = HostOfGpu(g);
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
      if (store_.Transition(j.id, JobState::kRunning, JobState::kCancelled, u).ok()) {
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
  std::lock_guard lock(mu_);
  std::vector<HostView> out;
  for (const auto& [name, host] : hosts_) {
    HostView v;
    v.name = name;
    v.health = host.lost     ? HostView::Health::kLost
               : host.silent ? HostView::Health::kSilent
                             : HostView::Health::kUp;
    if (host.reported) v.last_report = host.heard;
    v.gpus = host.gpus;
    v.status = host.status;
    v.reasons = host.reasons;
    if (with_details) v.details = host.details;
    v.jobs = static_cast<int>(host.jobs.size());
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace gleaner::cluster
