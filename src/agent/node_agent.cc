#include "agent/node_agent.h"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "agent/process_info.h"
#include "core/format.h"
#include "core/json_depth.h"
#include "core/private_file.h"
#include "observe/lending.h"
#include "sched/window_fit.h"

namespace gleaner::agent {

using cluster::JobAttempt;
using cluster::JobEvent;
using nlohmann::json;

namespace {

using cluster::Job;

// Why a claimed GPU's job is asked to leave, as the preemption counter
// names it.
std::string_view PreemptionKind(const observe::Verdict& v) {
  // A parked holder on its way back is its owner returning.
  const bool restoring =
      v.evidence.parking && v.evidence.parking->phase == observe::HolderParking::Phase::kRestoring;
  return v.evidence.foreign_processes > 0 || restoring ? "owner_returned"
         : v.state == observe::GpuState::kProtected    ? "protected"
         : v.state == observe::GpuState::kReserved     ? "reserved"
                                                       : "unhealthy";
}

// About 250 bytes each as JSON.
constexpr size_t kMaxMinutesPerReport = 1000;
constexpr size_t kMaxMinutesKept = 100'000;
// How stale the state file's record of the last reply may grow.
constexpr core::Duration kHeardSavedEvery = core::Seconds(10);
// A GPU's processes and evidence go to the coordinator when they change,
// and this often besides: the evidence's durations grow meanwhile.
constexpr core::Duration kDetailsEvery = core::Seconds(60);

// A name for this run of the agent (AgentReport::run): 16 random hex
// digits; should the kernel's generator fail, the start time and pid,
// which no other run on this host shares.
std::string NewRunName(core::TimePoint now) {
  uint64_t bits = 0;
  if (getrandom(&bits, sizeof bits, 0) != static_cast<ssize_t>(sizeof bits)) {
    bits = static_cast<uint64_t>(core::ToUnixMicros(now)) ^ (static_cast<uint64_t>(getpid()) << 44);
  }
  char name[17];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(bits));
  return name;
}

}  // namespace

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

core::Duration MinuteSendDelay(std::string_view run) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a: the same on every host and build
  for (const char c : run) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return core::Milliseconds(static_cast<int64_t>(h % 45'000));
}

NodeAgent::NodeAgent(JobRunner& runner, const core::Clock& clock, NodeAgentOptions options,
                     SendReport send)
    : runner_(runner),
      clock_(clock),
      options_(std::move(options)),
      send_(std::move(send)),
      run_(NewRunName(clock.Now())),
      minute_delay_(MinuteSendDelay(run_)),
      heard_(clock.Now()) {}

std::map<core::GpuUuid, LentGpu> NodeAgent::LentGpus() const {
  std::map<core::GpuUuid, LentGpu> lent;
  for (const auto& [id, j] : jobs_) {
    const auto run = runner_.running().find(id);
    const bool known = run != runner_.running().end();
    const std::string slurm_job = known ? run->second.slurm_job_id : "";
    const std::optional<uint32_t> session =
        known && slurm_job.empty() ? std::optional(static_cast<uint32_t>(run->second.pid))
                                   : std::nullopt;
    for (const core::GpuUuid& g : j.gpus) {
      const auto loan = j.beside_holder.find(g);
      lent[g] = {id,
                 session,
                 loan == j.beside_holder.end()
                     ? std::nullopt
                     : std::optional<observe::LoanBesideHolder>(loan->second),
                 slurm_job,
                 known ? run->second.uid : std::nullopt,
                 j.user};
    }
  }
  return lent;
}

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
    const auto run = runner_.running().find(id);
    json gpus = json::array();
    for (const core::GpuUuid& g : j.gpus) gpus.push_back(g.str());
    json one = {{"job", id},
                {"attempt", j.of.attempt},
                {"gpus", std::move(gpus)},
                {"checkpoint_signal", j.checkpoint_signal},
                {"grace_us", j.grace.count()},
                {"user", j.user}};
    if (run != runner_.running().end() && run->second.process_started_at) {
      one["pid"] = run->second.pid;
      one["process_started_us"] = core::ToUnixMicros(*run->second.process_started_at);
    }
    if (run != runner_.running().end() && !run->second.slurm_job_id.empty()) {
      one["slurm_job"] = run->second.slurm_job_id;
    }
    // A restarted agent still knows the job runs beside a holder, and does
    // not take the holder for an owner come back.
    for (const auto& [gpu, loan] : j.beside_holder) {
      one["beside_holder"].push_back({{"gpu", gpu.str()},
                                      {"holder_pids", loan.holder_pids},
                                      {"holder_peak_bytes", loan.holder_peak.count()},
                                      {"declared_bytes", loan.declared.count()}});
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
  if (auto s = core::WritePrivateFile(tmp, state.dump()); !s.ok()) {
    log(s.message() + ": after a restart the agent would not find its jobs");
    return;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, options_.state_path, ec);
  if (ec) log("cannot replace " + options_.state_path + ": " + ec.message());
}

void NodeAgent::TakeBack(const HeldJob& held, const cluster::Log& log) {
  const JobHandle handle{held.of.job, held.pid, held.process_started_at, held.slurm_job_id,
                         options_.log_dir};
  if (runner_.Adopt(handle).ok()) {
    log(Job(held.of.job) + " still running (" +
        (held.slurm_job_id.empty() ? "pid " + std::to_string(held.pid.value_or(0))
                                   : "Slurm job " + held.slurm_job_id) +
        "): taken back");
    jobs_[held.of.job] = {
        held.of, held.gpus, held.checkpoint_signal, held.grace, held.beside_holder, "", held.user};
    return;
  }
  JobEvent e;
  e.of = held.of;
  e.kind = JobEvent::Kind::kExited;
  e.at = clock_.Now();
  const std::optional<JobExit> ended = runner_.EndedWhileAway(handle);
  e.status_unknown = !ended;
  if (ended) {
    e.exit_code = ended->exit_code;
    e.signal = ended->signal;
    if (!ended->requeued_for.empty()) {
      e.vacated = true;
      e.reason = ended->requeued_for;
    }
  }
  Emit(std::move(e));
  log(Job(held.of.job) + " ended while gleaner was down" +
      (ended ? "" : "; how is unknown (killed with its first process)"));
}

void NodeAgent::Recover(const cluster::Log& log,
                        const std::function<std::vector<HeldJob>()>& without_state) {
  const core::Result<std::string> text = core::ReadPrivateFile(options_.state_path);
  if (text.ok()) {
    TakeBackFromState(*text, log);
  } else if (text.status().code() == core::StatusCode::kNotFound) {
    // A new agent, or a daemon that kept no state file.
    if (without_state) {
      for (const HeldJob& held : without_state()) TakeBack(held, log);
    }
  } else {
    log(text.status().message() + "; jobs started before the restart are not taken back");
  }
  runner_.SweepLeftovers();
  Save(log);
}

void NodeAgent::TakeBackFromState(const std::string& text, const cluster::Log& log) {
  try {
    if (core::NestsDeeperThan(text)) throw std::runtime_error("nested too deeply");
    const json state = json::parse(text);
    if (auto events = cluster::ReportFromJson(
            {{"gpus", json::array()}, {"running", json::array()}, {"events", state.at("events")}});
        events.ok()) {
      outbox_.assign(events->events.begin(), events->events.end());
    }
    next_seq_ = state.at("next_seq").get<int64_t>();
    heard_ = core::FromUnixMicros(state.value("heard_us", core::ToUnixMicros(heard_)));
    lease_ = core::Duration(state.value("lease_us", int64_t{0}));
    for (const json& j : state.at("jobs")) {
      HeldJob held;
      held.of = {j.at("job").get<sched::JobId>(), j.at("attempt").get<int>()};
      for (const json& g : j.at("gpus")) held.gpus.emplace_back(g.get<std::string>());
      held.checkpoint_signal = j.at("checkpoint_signal").get<int>();
      held.grace = core::Duration(j.at("grace_us").get<int64_t>());
      held.slurm_job_id = j.value("slurm_job", "");
      held.user = j.value("user", "");
      if (j.contains("pid")) {
        held.pid = j["pid"].get<int>();
        held.process_started_at = core::FromUnixMicros(j.at("process_started_us").get<int64_t>());
      }
      for (const json& l : j.value("beside_holder", json::array())) {
        observe::LoanBesideHolder loan{l.at("holder_pids").get<std::vector<uint32_t>>(),
                                       core::Bytes(l.at("holder_peak_bytes").get<uint64_t>()),
                                       core::Bytes(l.at("declared_bytes").get<uint64_t>())};
        std::sort(loan.holder_pids.begin(), loan.holder_pids.end());
        held.beside_holder[core::GpuUuid(l.at("gpu").get<std::string>())] = std::move(loan);
      }
      TakeBack(held, log);
    }
  } catch (const std::exception& e) {
    log("cannot read " + options_.state_path + " (" + e.what() +
        "); jobs started before the restart are not taken back");
  }
}

void NodeAgent::Act(const HostPass& pass, const cluster::Log& log) {
  RecordExits(log);
  if (Exchange(pass, log)) Exchange(pass, log);
}

bool NodeAgent::Exchange(const HostPass& pass, const cluster::Log& log) {
  StopBeyondDeclared(pass, log);
  Vacate(pass, log);
  auto reply = send_(Report(pass));
  if (!reply.ok()) {
    // A refusal stands until someone acts on it: said once as it changes,
    // apart from the coordinator being away.
    const core::StatusCode code = reply.status().code();
    const bool refused = code == core::StatusCode::kPermissionDenied ||
                         code == core::StatusCode::kFailedPrecondition ||
                         code == core::StatusCode::kInvalidArgument;
    if (refused && reply.status().message() != refusal_) {
      log("the coordinator refused this host's report: " + reply.status().message());
    } else if (!refused && connected_) {
      log("coordinator unreachable: " + reply.status().message());
    }
    refusal_ = refused ? reply.status().message() : "";
    connected_ = false;
    return false;
  }
  refusal_.clear();
  if (!connected_) log("reporting to the coordinator");
  connected_ = true;
  heard_ = clock_.Now();
  return Obey(*reply, pass, log);
}

void NodeAgent::RecordExits(const cluster::Log& log) {
  bool changed = false;
  for (const JobExit& e : runner_.Reap()) {
    auto it = jobs_.find(e.id);
    if (it == jobs_.end()) continue;
    JobEvent ev;
    ev.of = it->second.of;
    ev.kind = JobEvent::Kind::kExited;
    ev.at = e.at;
    ev.exit_code = e.exit_code;
    ev.signal = e.signal;
    ev.status_unknown = e.status_unknown;
    ev.vacated = planner_.IsVacating(e.id) || !e.requeued_for.empty();
    ev.reason = e.requeued_for.empty() ? planner_.Reason(e.id) : e.requeued_for;
    if (auto killed = killed_for_.extract(e.id)) ev.reason = killed.mapped();
    log(Job(e.id) + " ended" +
        (e.exit_code ? " (exit " + std::to_string(*e.exit_code) + ")"
         : e.signal  ? " (signal " + std::to_string(*e.signal) + ")"
                     : "") +
        (ev.vacated ? " after being asked to leave: " + ev.reason : ""));
    // From the claim (the checkpoint signal went out in that same pass) to
    // the job's processes gone: how long the owner waited for the GPU.
    if (const std::optional<core::TimePoint> claimed_at = planner_.Since(e.id);
        ev.vacated && claimed_at && !e.status_unknown) {
      log(Job(e.id) + " gave its GPUs back " + core::FormatDuration(clock_.Now() - *claimed_at) +
          " after the claim");
      if (metrics_ != nullptr) metrics_->GaveBack(clock_.Now() - *claimed_at);
    }
    planner_.Forget(e.id);
    killing_.erase(e.id);
    unassigned_.erase(e.id);
    jobs_.erase(it);
    Emit(std::move(ev));
    changed = true;
  }
  // What the runner says of a job since it started (Slurm's state of a
  // bridged job) goes to the coordinator as the start repeated with the
  // new words, which `gleaner queue` shows.
  for (auto& [id, j] : jobs_) {
    const auto run = runner_.running().find(id);
    if (run == runner_.running().end() || run->second.slurm_state == j.reported_state) continue;
    j.reported_state = run->second.slurm_state;
    JobEvent ev;
    ev.of = j.of;
    ev.kind = JobEvent::Kind::kStarted;
    ev.at = clock_.Now();
    ev.reason = j.reported_state;
    log(Job(id) + ": " + j.reported_state);
    Emit(std::move(ev));
    changed = true;
  }
  if (changed) Save(log);
}

void NodeAgent::StopBeyondDeclared(const HostPass& pass, const cluster::Log& log) {
  std::map<core::GpuUuid, const observe::GpuSample*> samples;
  for (const observe::GpuSample& s : pass.samples) samples[s.uuid] = &s;
  for (const auto& [id, j] : jobs_) {
    if (killing_.contains(id)) continue;
    for (const auto& [gpu, loan] : j.beside_holder) {
      const auto s = samples.find(gpu);
      if (s == samples.end()) continue;
      core::Bytes used;
      for (const observe::ObservedProcess& p : s->second->processes) {
        if (p.gleaner_job) used = used + p.used_memory;
      }
      if (used <= loan.declared) continue;
      const std::string why = "used " + core::FormatBytes(used) + " of " + gpu.str() +
                              " beside its holder, more than the " +
                              core::FormatBytes(loan.declared) +
                              " it declared; declare what the job uses (--gpu-memory)";
      log(Job(id) + " killed: " + why);
      killing_.insert(id);
      killed_for_[id] = why;
      runner_.Signal(id, 9).IgnoreError();
      if (metrics_ != nullptr) metrics_->Preempted("beyond_declared_memory");
      break;
    }
  }
}

void NodeAgent::Vacate(const HostPass& pass, const cluster::Log& log) {
  // A lent GPU is claimed back when anyone else's process is on it, when a
  // protected user or command appears, or when it is no longer healthy.
  std::map<core::GpuUuid, sched::GpuClaim> claims;
  std::map<core::GpuUuid, std::string_view> claim_kind;  // for the preemption counter
  for (const observe::Verdict& v : pass.verdicts) {
    if (auto why = observe::ClaimOf(v)) {
      claims[v.uuid] = {v.uuid, *why};
      claim_kind[v.uuid] = PreemptionKind(v);
    }
  }
  // Beside a holder, a process list that cannot be read hides the holder:
  // the job leaves rather than share the GPU blind.
  for (const observe::GpuSample& s : pass.samples) {
    if (s.processes_known || !s.beside_holder) continue;
    claims.try_emplace(s.uuid, sched::GpuClaim{s.uuid, "the process list of " + s.uuid.str() +
                                                           " cannot be read: the holder beside "
                                                           "the job cannot be watched"});
    claim_kind.try_emplace(s.uuid, "unhealthy");
  }
  // Past the lease, the coordinator gives this host's jobs to others.
  const core::TimePoint now = clock_.Now();
  std::vector<sched::RunningOnGpus> running;
  std::map<sched::JobId, std::string_view> preempted_for;
  for (const auto& [id, j] : jobs_) {
    if (killing_.contains(id)) continue;
    running.push_back({id, j.gpus, j.checkpoint_signal, j.grace});
    for (const core::GpuUuid& g : j.gpus) {
      if (auto kind = claim_kind.find(g); kind != claim_kind.end()) {
        preempted_for.try_emplace(id, kind->second);
      }
    }
    std::string leave;
    if (auto p = preempt_.find(id); p != preempt_.end()) {
      leave = p->second;
      preempted_for.try_emplace(id, "scheduler");
    }
    if (lease_ > core::Duration{} && now - heard_ > lease_) {
      leave = "no coordinator heard for " + core::FormatDuration(now - heard_) +
              ", past the lease of " + core::FormatDuration(lease_) +
              ": the job will be requeued elsewhere";
      preempted_for.try_emplace(id, "coordinator_lost");
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
      if (metrics_ != nullptr) {
        const auto kind = preempted_for.find(a.job);
        metrics_->Preempted(kind == preempted_for.end() ? "scheduler" : kind->second);
      }
    } else {
      log(Job(a.job) + " killed: " + a.reason);
    }
    runner_.Tell(a.job, a.reason);
    if (auto s = runner_.Signal(a.job, a.signal); !s.ok()) log(s.message());
  }
  if (changed) Save(log);
}

cluster::AgentReport NodeAgent::Report(const HostPass& pass) {
  cluster::AgentReport r;
  // A pass that read no GPU (the driver failed) says nothing of them.
  if (send_inventory_ && !pass.snapshots.empty()) {
    r.inventory = InventoryOf(pass.snapshots, options_.links);
    r.rack = options_.rack;
    r.host = options_.host;
  }
  // Reasons go with a state the coordinator has not acknowledged yet.
  sent_states_.assign(pass.verdicts.size(), observe::GpuState::kUnknown);
  sent_details_ = acked_details_;
  sent_details_.resize(pass.verdicts.size());
  int at = 0;
  for (size_t i = 0; i < pass.snapshots.size(); ++i) {
    if (pass.snapshots[i].uuid.empty()) continue;
    const observe::Verdict& v = pass.verdicts[i];
    const observe::GpuSample& s = pass.samples[i];
    cluster::GpuStatus g;
    g.state = v.state;
    const bool forbidden = !runner_.WhyNotLendable(pass.snapshots[i]).empty();
    g.lendable_free = !forbidden && observe::MayLend(v, false);
    g.lendable_placed = !forbidden && observe::MayLend(v, true);
    g.lend_memory_mib = static_cast<int64_t>(observe::LendMemory(v).count() >> 20);
    if (v.evidence.quiet_forecast) {
      g.quiet_p80_s = sched::RoundQuietWindow(v.evidence.quiet_forecast->p80).count() / 1'000'000;
    }
    g.utilization_pct = s.utilization_pct;
    if (s.memory_used) g.memory_used_mib = static_cast<int64_t>(s.memory_used->ToMiB());
    g.power_w = s.power_w;
    if (s.temperature_c) g.temperature_c = *s.temperature_c;
    r.gpus.push_back(g);
    if (send_inventory_ || i >= acked_states_.size() || acked_states_[i] != v.state) {
      r.reasons.emplace_back(at, v.evidence.reason);
    }
    sent_states_[i] = v.state;
    // Details when what they show changed, and once a minute besides.
    std::string shows =
        std::string(observe::GpuStateName(v.state)) + (s.processes_known ? ":" : "?");
    for (const observe::ObservedProcess& p : s.processes) shows += std::to_string(p.pid) + ",";
    DetailSent& sent = sent_details_[i];
    if (send_inventory_ || sent.shows != shows || pass.at - sent.at >= kDetailsEvery) {
      std::vector<observe::ObservedProcess> processes = s.processes;
      if (processes.size() > cluster::kMaxProcessesPerGpu) {
        std::partial_sort(
            processes.begin(), processes.begin() + cluster::kMaxProcessesPerGpu, processes.end(),
            [](const auto& a, const auto& b) { return a.used_memory > b.used_memory; });
        processes.resize(cluster::kMaxProcessesPerGpu);
      }
      r.details.emplace_back(at, cluster::GpuDetail{s.processes_known, std::move(processes), v});
      sent = {std::move(shows), pass.at};
    }
    ++at;
  }
  for (const auto& [id, j] : jobs_) r.running.push_back(j.of);
  r.events.assign(outbox_.begin(), outbox_.end());
  // A report stays well under the API's 1 MiB: a backlog goes a slice at
  // a time.
  const bool due =
      !minutes_.empty() && pass.at >= minutes_.front().minute + core::Seconds(60) + minute_delay_;
  const size_t n = due ? std::min(minutes_.size(), kMaxMinutesPerReport) : 0;
  r.minutes.assign(minutes_.begin(), minutes_.begin() + static_cast<std::ptrdiff_t>(n));
  minutes_sent_ = n;
  r.run = run_;
  r.logs = log_chunks_;
  log_chunks_sent_ = log_chunks_.size();
  return r;
}

bool NodeAgent::Obey(const cluster::AgentReply& reply, const HostPass& pass,
                     const cluster::Log& log) {
  send_inventory_ = reply.send_inventory;
  acked_states_ = sent_states_;
  acked_details_ = sent_details_;
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
  for (const cluster::Preemption& c : reply.cancel) {
    auto j = jobs_.find(c.of.job);
    if (j == jobs_.end() || j->second.of != c.of || killing_.contains(c.of.job)) continue;
    log(Job(c.of.job) + " " + c.reason + ": killing it");
    killing_.insert(c.of.job);
    runner_.Tell(c.of.job, "Job " + std::to_string(c.of.job) + " " + c.reason + ".");
    runner_.Signal(c.of.job, 9).IgnoreError();
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
    runner_.Signal(id, 9).IgnoreError();
  }
  if (!reply.holders.empty()) {
    if (on_holder_requests_) {
      on_holder_requests_(reply.holders, log);
    } else {
      log("the coordinator asked to keep or unpark a holder; this host parks none");
    }
  }
  bool started = false;
  for (const cluster::JobToStart& s : reply.start) {
    // An earlier attempt still leaving, or this very attempt started before.
    if (jobs_.contains(s.of.job) || launched_.contains(s.of)) continue;
    Launch(s, pass, log);
    started = changed = true;
  }
  if (changed) Save(log);
  log_chunks_.erase(log_chunks_.begin(),
                    log_chunks_.begin() + static_cast<std::ptrdiff_t>(log_chunks_sent_));
  log_chunks_sent_ = 0;
  ReadLogs(reply.logs);
  return started || !log_chunks_.empty();
}

void NodeAgent::ReadLogs(const std::vector<cluster::LogRequest>& requests) {
  std::set<uint64_t> asked;
  for (const cluster::LogRequest& l : requests) {
    asked.insert(l.id);
    if (logs_read_.contains(l.id)) continue;
    const std::string path =
        options_.log_dir + "/" + std::to_string(l.job) + (l.err ? ".err" : ".out");
    auto data = core::ReadLogChunk(path, l.offset, cluster::kMaxLogChunkBytes);
    cluster::LogChunk chunk{l.id, {}, l.offset, {}};
    if (data.ok()) {
      chunk.next = l.offset + data->size();
      chunk.data = std::move(data).value();
    } else {
      chunk.error = data.status().message();
    }
    log_chunks_.push_back(std::move(chunk));
  }
  // Only what the coordinator still asks for is remembered.
  logs_read_ = std::move(asked);
}

void NodeAgent::Launch(const cluster::JobToStart& job, const HostPass& pass,
                       const cluster::Log& log) {
  launched_.insert(job.of);
  // A GPU that lends beside its holder, to a job whose declaration fits
  // there: the loan, which the classifier then judges the holder by.
  std::map<core::GpuUuid, observe::LoanBesideHolder> beside;
  for (size_t i = 0; i < pass.verdicts.size() && i < pass.samples.size(); ++i) {
    const observe::Verdict& v = pass.verdicts[i];
    if (std::find(job.gpus.begin(), job.gpus.end(), v.uuid) == job.gpus.end() ||
        !observe::LendableBeside(v) || job.spec.gpu_memory == core::Bytes() ||
        job.spec.gpu_memory > v.evidence.beside_holder->lendable) {
      continue;
    }
    observe::LoanBesideHolder loan{{}, v.evidence.beside_holder->holder_peak, job.spec.gpu_memory};
    for (const observe::ObservedProcess& p : pass.samples[i].processes) {
      if (!p.gleaner_job) loan.holder_pids.push_back(p.pid);
    }
    std::sort(loan.holder_pids.begin(), loan.holder_pids.end());
    beside[v.uuid] = std::move(loan);
  }
  JobEvent e;
  e.of = job.of;
  e.at = clock_.Now();
  const std::optional<uint32_t> uid = job.uid ? job.uid : UserId(job.user);
  core::Result<RunningJob> launched =
      uid ? runner_.Launch(
                {job.of.job, *uid, job.spec, job.gpus, options_.log_dir, job.array_id,
                 job.array_index,
                 beside.empty() ? std::nullopt : std::optional<core::Bytes>(job.spec.gpu_memory),
                 job.gang})
          : core::Result<RunningJob>(core::NotFound(
                "user " + job.user + " does not exist on this host; jobs run as their submitter"));
  if (!launched.ok()) {
    e.kind = JobEvent::Kind::kExited;
    e.reason = launched.status().message();
    if (launched.status().code() == core::StatusCode::kUnavailable) {
      // Something of this host's that may be back in a moment (the user
      // directory, descriptors, memory): the job goes back to the queue.
      e.vacated = true;
      e.reason = "could not start on this host for the moment (" + e.reason + ")";
      log(Job(job.of.job) + " did not start, requeued: " + e.reason);
    } else {
      e.launch_failed = true;
      log(Job(job.of.job) + " failed to start: " + e.reason);
    }
    Emit(std::move(e));
    return;
  }
  jobs_[job.of.job] = {job.of,         job.gpus, job.spec.checkpoint_signal,
                       job.spec.grace, beside,   launched->slurm_state,
                       job.user};
  e.kind = JobEvent::Kind::kStarted;
  if (launched->slurm_job_id.empty()) {
    e.pid = launched->pid;
    e.process_started_at = launched->process_started_at;
  }
  e.reason = launched->slurm_state;
  std::string gpus;
  for (const core::GpuUuid& g : job.gpus) gpus += (gpus.empty() ? "" : ",") + g.str();
  std::string holders;
  for (const auto& [gpu, loan] : beside) {
    holders += "; beside the holder of " + gpu.str() + " (peak " +
               core::FormatBytes(loan.holder_peak) + ", " + core::FormatBytes(loan.declared) +
               " declared)";
  }
  log(Job(job.of.job) + " started as " + job.user + " on " + gpus +
      (launched->slurm_job_id.empty() ? " (pid " + std::to_string(launched->pid) + ")"
                                      : ": " + launched->slurm_state) +
      holders);
  Emit(std::move(e));
}

}  // namespace gleaner::agent
