#include "agent/node_agent.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agent/harvester.h"
#include "agent/process_info.h"
#include "core/format.h"
#include "observe/lending.h"

namespace gleaner::agent {

using cluster::JobAttempt;
using cluster::JobEvent;
using nlohmann::json;

namespace {

std::string Job(sched::JobId id) { return "job " + std::to_string(id); }

// About 250 bytes each as JSON.
constexpr size_t kMaxMinutesPerReport = 1000;
constexpr size_t kMaxMinutesKept = 100'000;
// How stale the state file's record of the last reply may grow.
constexpr core::Duration kHeardSavedEvery = core::Seconds(10);

}  // namespace

std::vector<cluster::InventoryGpu> InventoryOf(const std::vector<gpu::GpuSnapshot>& snapshots,
                                               const std::vector<gpu::GpuLink>& links) {
  const std::map<core::GpuUuid, int> islands = NvlinkIslands(links, snapshots);
  std::vector<cluster::InventoryGpu> out;
  for (const gpu::GpuSnapshot& s : snapshots) {
    if (s.uuid.empty()) continue;  // never attached: nothing to lend
    auto island = islands.find(s.uuid);
    out.push_back({s.uuid, static_cast<int>(s.index), s.name.value_or(""),
                   s.memory_total.value_or(core::Bytes()),
                   island == islands.end() ? -1 : island->second});
  }
  return out;
}

NodeAgent::NodeAgent(Executor& executor, const core::Clock& clock, NodeAgentOptions options,
                     SendReport send)
    : executor_(executor),
      clock_(clock),
      options_(std::move(options)),
      send_(std::move(send)),
      heard_(clock.Now()) {}

void NodeAgent::Emit(JobEvent event) {
  event.seq = next_seq_++;
  outbox_.push_back(std::move(event));
}

void NodeAgent::AddMinutes(const std::vector<observe::MinuteRollup>& minutes) {
  minutes_.insert(minutes_.end(), minutes.begin(), minutes.end());
  // A coordinator away for days: the oldest minutes stay only in the
  // host's own history.
  if (minutes_.size() > kMaxMinutesKept) {
    minutes_.erase(minutes_.begin(), minutes_.begin() + static_cast<std::ptrdiff_t>(
                                                            minutes_.size() - kMaxMinutesKept));
  }
}

void NodeAgent::Save(const cluster::Log& log) {
  json jobs = json::array();
  for (const auto& [id, j] : jobs_) {
    const auto run = executor_.running().find(id);
    json gpus = json::array();
    for (const core::GpuUuid& g : j.gpus) gpus.push_back(g.str());
    json one = {{"job", id},
                {"attempt", j.of.attempt},
                {"gpus", std::move(gpus)},
                {"checkpoint_signal", j.checkpoint_signal},
                {"grace_us", j.grace.count()}};
    if (run != executor_.running().end() && run->second.process_started_at) {
      one["pid"] = run->second.pid;
      one["process_started_us"] = core::ToUnixMicros(*run->second.process_started_at);
    }
    jobs.push_back(std::move(one));
  }
  cluster::AgentReport unsent;
  unsent.events.assign(outbox_.begin(), outbox_.end());
  // The last reply and the lease it gave: a restarted agent that cannot
  // reach a coordinator still stops its jobs in time.
  saved_heard_ = heard_;
  const json state = {{"jobs", std::move(jobs)},
                      {"next_seq", next_seq_},
                      {"heard_us", core::ToUnixMicros(heard_)},
                      {"lease_us", lease_.count()},
                      {"events", cluster::ReportToJson(unsent).value("events", json::array())}};
  // Written aside and renamed: a kill mid-write leaves the old state whole.
  const std::string tmp = options_.state_path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << state.dump();
    if (!out.flush()) {
      log("cannot write " + tmp + ": after a restart the agent would not find its jobs");
      return;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, options_.state_path, ec);
  if (ec) log("cannot replace " + options_.state_path + ": " + ec.message());
}

void NodeAgent::Recover(const cluster::Log& log) {
  std::ifstream in(options_.state_path);
  if (!in) return;  // a new agent
  json state;
  try {
    state = json::parse(in);
    cluster::AgentReport unsent;
    if (auto events = cluster::ReportFromJson(
            {{"gpus", json::array()}, {"running", json::array()}, {"events", state.at("events")}});
        events.ok()) {
      outbox_.assign(events->events.begin(), events->events.end());
    }
    next_seq_ = state.at("next_seq").get<int64_t>();
    heard_ = core::FromUnixMicros(state.value("heard_us", core::ToUnixMicros(heard_)));
    lease_ = core::Duration(state.value("lease_us", int64_t{0}));
    for (const json& j : state.at("jobs")) {
      Launched l;
      l.of = {j.at("job").get<sched::JobId>(), j.at("attempt").get<int>()};
      for (const json& g : j.at("gpus")) l.gpus.emplace_back(g.get<std::string>());
      l.checkpoint_signal = j.at("checkpoint_signal").get<int>();
      l.grace = core::Duration(j.at("grace_us").get<int64_t>());
      const bool adopted =
          j.contains("pid") &&
          executor_
              .Adopt(l.of.job, j["pid"].get<int>(),
                     core::FromUnixMicros(j["process_started_us"].get<int64_t>()), options_.log_dir)
              .ok();
      if (adopted) {
        log(Job(l.of.job) + " still running (pid " + std::to_string(j["pid"].get<int>()) +
            "): taken back");
        jobs_[l.of.job] = std::move(l);
      } else {
        JobEvent e;
        e.of = l.of;
        e.kind = JobEvent::Kind::kExited;
        e.at = clock_.Now();
        const std::optional<JobExit> ended = Executor::EndedWhileAway(l.of.job, options_.log_dir);
        e.status_unknown = !ended;
        if (ended) {
          e.exit_code = ended->exit_code;
          e.signal = ended->signal;
        }
        Emit(std::move(e));
        log(Job(l.of.job) + " ended while the agent was down" +
            (ended ? "" : "; how is unknown (killed with its first process)"));
      }
    }
  } catch (const std::exception& e) {
    log("cannot read " + options_.state_path + " (" + e.what() +
        "); jobs started before the restart are not taken back");
  }
  executor_.SweepLeftovers();
  Save(log);
}

void NodeAgent::Act(const HostPass& pass, const cluster::Log& log) {
  RecordExits(log);
  Vacate(pass, log);
  auto reply = send_(Report(pass));
  if (!reply.ok()) {
    if (connected_) log("coordinator unreachable: " + reply.status().message());
    connected_ = false;
    return;
  }
  if (!connected_) log("reporting to the coordinator");
  connected_ = true;
  heard_ = clock_.Now();
  Obey(*reply, log);
}

void NodeAgent::RecordExits(const cluster::Log& log) {
  bool changed = false;
  for (const JobExit& e : executor_.Reap()) {
    auto it = jobs_.find(e.id);
    if (it == jobs_.end()) continue;
    JobEvent ev;
    ev.of = it->second.of;
    ev.kind = JobEvent::Kind::kExited;
    ev.at = e.at;
    ev.exit_code = e.exit_code;
    ev.signal = e.signal;
    ev.status_unknown = e.status_unknown;
    ev.vacated = planner_.IsVacating(e.id);
    ev.reason = planner_.Reason(e.id);
    log(Job(e.id) + " ended" +
        (e.exit_code ? " (exit " + std::to_string(*e.exit_code) + ")"
         : e.signal  ? " (signal " + std::to_string(*e.signal) + ")"
                     : "") +
        (ev.vacated ? " after being asked to leave: " + ev.reason : ""));
    planner_.Forget(e.id);
    killing_.erase(e.id);
    unassigned_.erase(e.id);
    jobs_.erase(it);
    Emit(std::move(ev));
    changed = true;
  }
  if (changed) Save(log);
}

void NodeAgent::Vacate(const HostPass& pass, const cluster::Log& log) {
  std::map<core::GpuUuid, sched::GpuClaim> claims;
  for (const observe::Verdict& v : pass.verdicts) {
    if (auto why = observe::ClaimOf(v)) claims[v.uuid] = {v.uuid, *why};
  }
  // Past the lease, the coordinator gives this host's jobs to others.
  const core::TimePoint now = clock_.Now();
  std::vector<sched::RunningOnGpus> running;
  for (const auto& [id, j] : jobs_) {
    if (killing_.contains(id)) continue;
    running.push_back({id, j.gpus, j.checkpoint_signal, j.grace});
    std::string leave;
    if (auto p = preempt_.find(id); p != preempt_.end()) leave = p->second;
    if (lease_ > core::Duration{} && now - heard_ > lease_) {
      leave = "no coordinator heard for " + core::FormatDuration(now - heard_) +
              ", past the lease of " + core::FormatDuration(lease_) +
              ": the job will be requeued elsewhere";
    }
    if (leave.empty()) continue;
    for (const core::GpuUuid& g : j.gpus) claims.try_emplace(g, sched::GpuClaim{g, leave});
  }
  bool changed = false;
  for (const sched::VacateAction& a : planner_.Plan(running, claims, now)) {
    if (a.kind == sched::VacateAction::Kind::kCheckpoint) {
      JobEvent e;
      e.of = jobs_.at(a.job).of;
      e.kind = JobEvent::Kind::kVacating;
      e.at = now;
      e.reason = a.reason;
      Emit(std::move(e));
      changed = true;
      log(Job(a.job) + " vacating (signal " + std::to_string(a.signal) + "): " + a.reason);
    } else {
      log(Job(a.job) + " killed: " + a.reason);
    }
    if (auto s = executor_.Signal(a.job, a.signal); !s.ok()) log(s.message());
  }
  if (changed) Save(log);
}

cluster::AgentReport NodeAgent::Report(const HostPass& pass) {
  cluster::AgentReport r;
  // A pass that read no GPU (the driver failed) says nothing of them.
  if (send_inventory_ && !pass.snapshots.empty()) {
    r.inventory = InventoryOf(pass.snapshots, options_.links);
  }
  // Reasons go with a state the coordinator has not acknowledged yet.
  sent_states_.assign(pass.verdicts.size(), observe::GpuState::kUnknown);
  int at = 0;
  for (size_t i = 0; i < pass.snapshots.size(); ++i) {
    if (pass.snapshots[i].uuid.empty()) continue;
    const observe::Verdict& v = pass.verdicts[i];
    const observe::GpuSample& s = pass.samples[i];
    cluster::GpuStatus g;
    g.state = v.state;
    g.lendable_free = observe::MayLend(v, false);
    g.lendable_placed = observe::MayLend(v, true);
    g.utilization_pct = s.utilization_pct;
    if (s.memory_used) g.memory_used_mib = static_cast<int64_t>(s.memory_used->ToMiB());
    g.power_w = s.power_w;
    if (s.temperature_c) g.temperature_c = *s.temperature_c;
    r.gpus.push_back(g);
    if (send_inventory_ || i >= acked_states_.size() || acked_states_[i] != v.state) {
      r.reasons.emplace_back(at, v.evidence.reason);
    }
    sent_states_[i] = v.state;
    ++at;
  }
  for (const auto& [id, j] : jobs_) r.running.push_back(j.of);
  r.events.assign(outbox_.begin(), outbox_.end());
  // A report stays well under the API's 1 MiB: a backlog goes a slice at
  // a time.
  const size_t n = std::min(minutes_.size(), kMaxMinutesPerReport);
  r.minutes.assign(minutes_.begin(), minutes_.begin() + static_cast<std::ptrdiff_t>(n));
  minutes_sent_ = n;
  return r;
}

void NodeAgent::Obey(const cluster::AgentReply& reply, const cluster::Log& log) {
  send_inventory_ = reply.send_inventory;
  acked_states_ = sent_states_;
  bool changed = reply.lease != lease_ || heard_ - saved_heard_ >= kHeardSavedEvery;
  lease_ = reply.lease;
  minutes_.erase(minutes_.begin(), minutes_.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                          minutes_.size(), minutes_sent_)));
  const size_t before = outbox_.size();
  while (!outbox_.empty() && outbox_.front().seq <= reply.acked) outbox_.pop_front();
  changed = changed || outbox_.size() != before;
  preempt_.clear();
  for (const cluster::Preemption& p : reply.preempt) {
    auto j = jobs_.find(p.of.job);
    if (j != jobs_.end() && j->second.of == p.of) preempt_[p.of.job] = p.reason;
  }
  // What runs here but is no longer assigned here (cancelled, or requeued
  // while this host was away and perhaps running elsewhere) is killed: once
  // two replies in a row leave it out, and never on the word of a
  // coordinator that does not know this host's GPUs yet (it just took over).
  const std::set<JobAttempt> assigned(reply.assigned.begin(), reply.assigned.end());
  for (const auto& [id, j] : jobs_) {
    if (assigned.contains(j.of)) {
      unassigned_.erase(id);
      continue;
    }
    if (killing_.contains(id) || reply.send_inventory || ++unassigned_[id] < 2) continue;
    log(Job(id) +
        " is no longer assigned to this host (cancelled, or requeued while the agent "
        "was away): killing it");
    killing_.insert(id);
    executor_.Signal(id, 9).IgnoreError();
  }
  for (const cluster::JobToStart& s : reply.start) {
    // An earlier attempt still leaving, or this very attempt started before.
    if (jobs_.contains(s.of.job) || launched_.contains(s.of)) continue;
    Launch(s, log);
    changed = true;
  }
  if (changed) Save(log);
}

void NodeAgent::Launch(const cluster::JobToStart& job, const cluster::Log& log) {
  launched_.insert(job.of);
  JobEvent e;
  e.of = job.of;
  e.at = clock_.Now();
  const std::optional<uint32_t> uid = UserId(job.user);
  core::Result<RunningJob> launched =
      uid ? executor_.Launch({job.of.job, *uid, job.spec, job.gpus, options_.log_dir, job.array_id,
                              job.array_index})
          : core::Result<RunningJob>(core::NotFound(
                "user " + job.user + " does not exist on this host; jobs run as their submitter"));
  if (!launched.ok()) {
    e.kind = JobEvent::Kind::kExited;
    e.launch_failed = true;
    e.reason = launched.status().message();
    log(Job(job.of.job) + " failed to start: " + e.reason);
    Emit(std::move(e));
    return;
  }
  jobs_[job.of.job] = {job.of, job.gpus, job.spec.checkpoint_signal, job.spec.grace};
  e.kind = JobEvent::Kind::kStarted;
  e.pid = launched->pid;
  e.process_started_at = launched->process_started_at;
  std::string gpus;
  for (const core::GpuUuid& g : job.gpus) gpus += (gpus.empty() ? "" : ",") + g.str();
  log(Job(job.of.job) + " started as " + job.user + " on " + gpus + " (pid " +
      std::to_string(launched->pid) + ")");
  Emit(std::move(e));
}

}  // namespace gleaner::agent
