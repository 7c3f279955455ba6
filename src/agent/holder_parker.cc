#include "agent/holder_parker.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "agent/process_info.h"
#include "core/format.h"
#include "core/json_depth.h"
#include "core/private_file.h"

namespace gleaner::agent {

using nlohmann::json;
using Kind = observe::ParkAction::Kind;

namespace {

std::string Pid(uint32_t pid, const std::string& user = {}) {
  return "process " + std::to_string(pid) + (user.empty() ? "" : " of " + user);
}

// How long a pass waits for the driver to park or restore a holder before
// it goes on and hears the result at a later pass.
constexpr std::chrono::milliseconds kQuickDriverCall(250);

// A failed restore is tried again after 30 s, then 1, 2, 4 ... minutes, at
// most half an hour apart: a driver that failed once for a passing reason
// gets the holder back soon, one that keeps failing is not hammered. Its
// alert is said again each hour it lasts.
constexpr core::Duration kFirstRestoreRetry = core::Seconds(30);
constexpr core::Duration kLongestRestoreRetry = core::Seconds(1800);
constexpr core::Duration kRestoreAlertRepeat = core::Seconds(3600);

core::Duration RestoreBackOff(int failures) {
  core::Duration d = kFirstRestoreRetry;
  for (int i = 1; i < failures && d < kLongestRestoreRetry; ++i) d *= 2;
  return std::min(d, kLongestRestoreRetry);
}

std::string Millis(std::chrono::steady_clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

}  // namespace

std::optional<std::pair<core::Bytes, core::Bytes>> HostMemory(const std::string& meminfo) {
  std::ifstream in(meminfo);
  std::string line;
  std::optional<uint64_t> available_kib, total_kib;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    uint64_t kib = 0;
    if (!(fields >> key >> kib)) continue;
    if (key == "MemAvailable:") available_kib = kib;
    if (key == "MemTotal:") total_kib = kib;
  }
  if (!available_kib || !total_kib) return std::nullopt;
  return std::pair{core::Bytes(*available_kib << 10), core::Bytes(*total_kib << 10)};
}

HolderParker::HolderParker(const gpu::CudaCheckpoint* cuda, const core::Clock& clock,
                           HolderParkerOptions options)
    : cuda_(cuda), clock_(clock), options_(std::move(options)), planner_([&] {
        observe::ParkingConfig c = options_.config;
        c.enabled = c.enabled && cuda != nullptr;  // nothing to park with
        return c;
      }()) {}

void HolderParker::Save(const cluster::Log& log) {
  json holders = json::array();
  for (const auto& [gpu, p] : parked_) {
    json one = {{"gpu", gpu.str()},
                {"pid", p.pid},
                {"user", p.user},
                {"memory_bytes", p.memory.count()},
                {"at_us", core::ToUnixMicros(p.at)},
                {"done", p.done}};
    if (p.started_at) one["started_us"] = core::ToUnixMicros(*p.started_at);
    holders.push_back(std::move(one));
  }
  // Written aside and renamed: a kill mid-write leaves the old record whole.
  const std::string tmp = options_.state_path + ".tmp";
  if (auto s = core::WritePrivateFile(tmp, json{{"parked", holders}}.dump()); !s.ok()) {
    log(s.message() + ": after a restart gleaner would not know which holders it parked");
    return;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, options_.state_path, ec);
  if (ec) log("cannot replace " + options_.state_path + ": " + ec.message());
}

void HolderParker::Recover(const cluster::Log& log) {
  const core::Result<std::string> text = core::ReadPrivateFile(options_.state_path);
  if (!text.ok()) {
    if (text.status().code() != core::StatusCode::kNotFound) log(text.status().message());
    return;
  }
  json doc;
  try {
    // Refused before parsing: nesting that deep would overflow the stack.
    if (core::NestsDeeperThan(*text)) throw std::runtime_error("nested too deeply");
    doc = json::parse(*text).at("parked");
    for (const json& j : doc) {
      Parked p;
      p.pid = j.at("pid").get<uint32_t>();
      if (j.contains("started_us")) {
        p.started_at = core::FromUnixMicros(j["started_us"].get<int64_t>());
      }
      p.user = j.at("user").get<std::string>();
      p.memory = core::Bytes(j.at("memory_bytes").get<uint64_t>());
      p.at = core::FromUnixMicros(j.at("at_us").get<int64_t>());
      p.done = j.at("done").get<bool>();
      parked_[core::GpuUuid(j.at("gpu").get<std::string>())] = std::move(p);
    }
  } catch (const std::exception& e) {
    // Moved aside for a person to read (it may name a parked process), not
    // overwritten by the next park.
    const std::string aside = options_.state_path + ".malformed";
    std::error_code ec;
    std::filesystem::rename(options_.state_path, aside, ec);
    log(options_.state_path + " is malformed (" + e.what() + "); kept as " + aside +
        ": holders it names as parked are not watched; restore one with `cuda-checkpoint "
        "--toggle --pid PID`");
    parked_.clear();
    return;
  }
  for (auto it = parked_.begin(); it != parked_.end();) {
    const auto& [gpu, p] = *it;
    const std::string who = Pid(p.pid, p.user) + " on " + gpu.str();
    const std::optional<core::TimePoint> started = ProcessStartTime(p.pid, options_.proc_root);
    if (!started || (p.started_at && *started != *p.started_at)) {
      log(who + " exited while gleaner was down: nothing to restore");
      if (metrics_ != nullptr) metrics_->Parking("exited");
      it = parked_.erase(it);
      continue;
    }
    const core::Result<gpu::CudaProcessState> state =
        cuda_ != nullptr ? cuda_->State(p.pid)
                         : core::Result<gpu::CudaProcessState>(core::Unavailable(
                               "the CUDA driver's checkpoint API cannot be opened"));
    if (state.ok() && *state == gpu::CudaProcessState::kRunning) {
      log(who + " runs again (restored outside gleaner)");
      it = parked_.erase(it);
      continue;
    }
    if (!state.ok()) {
      log(who + " is recorded as parked, and the driver cannot say: " + state.status().message() +
          "; kept on record and restored when it wakes");
    } else if (*state == gpu::CudaProcessState::kLocked) {
      // Stopped between lock and checkpoint: let it run on as before.
      const core::Status unlocked = cuda_->Restore(p.pid);
      if (unlocked.ok()) {
        log(who + " was left locked mid-park: unlocked, it runs on");
        it = parked_.erase(it);
        continue;
      }
      log(who + " was left locked mid-park and cannot be unlocked yet (" + unlocked.message() +
          "); tried again when it wakes");
    } else {
      log(who + " still parked (" + core::FormatBytes(p.memory) +
          " in host memory): watched again, restored when it wakes");
    }
    it->second.done = true;
    planner_.Adopt(gpu, p.pid, p.user, p.memory, CpuTime(p.pid).value_or(core::Duration{}), p.at);
    ++it;
  }
  Save(log);
  core::MutexLock lock(mu_);
  parkings_ = planner_.Parkings();
}

std::optional<core::Duration> HolderParker::CpuTime(uint32_t pid) const {
  // A parked holder's pid taken by another process is a holder gone.
  for (const auto& [gpu, p] : parked_) {
    if (p.pid != pid || !p.started_at) continue;
    if (ProcessStartTime(pid, options_.proc_root) != p.started_at) return std::nullopt;
  }
  return ProcessCpuTime(pid, options_.proc_root);
}

void HolderParker::Tell(const std::string& rule, const core::GpuUuid& gpu, const std::string& user,
                        bool firing, const std::string& summary) {
  if (!notify_) return;
  observe::AlertEvent e;
  e.rule = rule;
  e.uuid = gpu;
  e.firing = firing;
  e.starts_at = clock_.Now();
  if (!firing) e.ends_at = e.starts_at;
  e.severity = rule == "holder_restore_failed" ? "critical" : "info";
  e.summary = summary;
  if (!user.empty()) e.users = {user};
  notify_({e});
}

void HolderParker::Step(const HostPass& pass, const std::map<core::GpuUuid, LentGpu>& lent,
                        const cluster::Log& log) {
  FinishCalls(std::chrono::milliseconds(0), log);
  const core::TimePoint now = clock_.Now();
  std::map<core::GpuUuid, GiveUpAsk> give_up;
  {
    // A holder the driver is moving is given up on once it is done.
    core::MutexLock lock(mu_);
    for (auto it = give_up_asked_.begin(); it != give_up_asked_.end();) {
      if (calls_.contains(it->first)) {
        ++it;
        continue;
      }
      give_up.insert(*it);
      it = give_up_asked_.erase(it);
    }
  }
  for (const auto& [gpu, ask] : give_up) GiveUpNow(gpu, ask, log);
  std::vector<observe::ParkFacts> facts;
  std::map<core::GpuUuid, Seen> seen;
  std::map<core::GpuUuid, const observe::GpuSample*> samples;
  {
    core::MutexLock lock(mu_);
    for (size_t i = 0; i < pass.verdicts.size() && i < pass.samples.size(); ++i) {
      const observe::Verdict& v = pass.verdicts[i];
      if (v.uuid.empty()) continue;
      samples[v.uuid] = &pass.samples[i];
      observe::ParkFacts f;
      f.verdict = v;
      Seen& one = seen[v.uuid];
      one.index = pass.snapshots.size() > i ? pass.snapshots[i].index : static_cast<uint32_t>(i);
      for (const observe::ObservedProcess& p : pass.samples[i].processes) {
        if (p.gleaner_job) continue;
        f.holders.push_back(p);
        one.pids.push_back(p.pid);
        if (!p.user.empty()) one.users.insert(p.user);
      }
      std::sort(one.pids.begin(), one.pids.end());
      // Kept until its holder computes again, or another holds the GPU.
      if (auto k = kept_.find(v.uuid); k != kept_.end()) {
        const bool quiet =
            v.state == observe::GpuState::kHeldIdle || v.state == observe::GpuState::kShared;
        if (quiet && k->second == one.pids) {
          f.kept = true;
        } else {
          kept_.erase(k);
        }
      }
      // An unpark asked during a park is heard once the park is done.
      f.unpark_asked = !calls_.contains(v.uuid) && unpark_asked_.erase(v.uuid) > 0;
      facts.push_back(std::move(f));
    }
  }
  // Host memory decides only whether to tell a holder: not read when
  // nothing new is parked.
  const auto host =
      planner_.config().enabled ? HostMemory(options_.proc_root + "/meminfo") : std::nullopt;
  const std::vector<observe::ParkAction> actions = planner_.Plan(
      facts, host ? std::optional(host->first) : std::nullopt, host ? host->second : core::Bytes(),
      [this](uint32_t pid) { return CpuTime(pid); }, now);
  std::map<core::GpuUuid, std::string> waiting;
  for (const observe::ParkAction& a : actions) {
    const std::string where = Pid(a.pid, a.user) + " on " + a.gpu.str();
    // What becomes of a holder the driver is moving is decided once it is done.
    if (a.kind != Kind::kNotify && calls_.contains(a.gpu)) continue;
    switch (a.kind) {
      case Kind::kNotify:
        log("parking notice: " + a.reason + " (GPU " + a.gpu.str() + ")");
        if (metrics_ != nullptr) metrics_->Parking("notice");
        Tell("holder_parking_notice", a.gpu, a.user, true, a.reason + " (GPU " + a.gpu.str() + ")");
        break;
      case Kind::kForget:
        log(where + ": " + a.reason);
        restoring_.erase(a.gpu);
        // A holder that exits while its restore backs off takes its alert with it.
        if (restore_trouble_.erase(a.gpu) > 0) {
          Tell("holder_restore_failed", a.gpu, a.user, false, where + ": " + a.reason);
        }
        if (parked_.erase(a.gpu) > 0) {
          if (metrics_ != nullptr) metrics_->Parking("exited");
          Save(log);
          Tell("holder_parked", a.gpu, a.user, false, where + ": " + a.reason);
        } else {
          if (metrics_ != nullptr) metrics_->Parking("refused");
          Tell("holder_parking_notice", a.gpu, a.user, false, where + ": " + a.reason);
        }
        break;
      case Kind::kPark:
        Park(a, log);
        break;
      case Kind::kRestore: {
        if (restoring_.emplace(a.gpu, now).second) log("restoring " + where + ": " + a.reason);
        // Its job leaves first: the verdict says restoring, which claims it.
        if (lent.contains(a.gpu)) break;
        const auto sample = samples.find(a.gpu);
        std::optional<std::string> wait =
            RestoreWait(a, sample == samples.end() ? nullptr : sample->second, now);
        if (!wait) {
          Restore(a, log);
          break;
        }
        // Said once as it begins; a failed try's back-off was said with it.
        if (!waiting_.contains(a.gpu) && !restore_trouble_.contains(a.gpu)) {
          log("restoring " + where + " waits: " + *wait);
        }
        waiting[a.gpu] = std::move(*wait);
        break;
      }
    }
  }
  // A small holder moves within the pass; a large one goes on beside the
  // passes that follow.
  FinishCalls(kQuickDriverCall, log);
  // A try that failed just now waits from now on.
  for (const auto& [gpu, trouble] : restore_trouble_) {
    if (now < trouble.retry_at && !calls_.contains(gpu)) waiting[gpu] = BackingOff(trouble, now);
  }
  waiting_ = std::move(waiting);
  core::MutexLock lock(mu_);
  if (!pass.verdicts.empty()) seen_ = std::move(seen);  // a pass that read no GPU says nothing
  parkings_ = planner_.Parkings();
  for (const auto& [gpu, why] : waiting_) {
    if (auto p = parkings_.find(gpu); p != parkings_.end()) p->second.waiting = why;
  }
}

std::string HolderParker::BackingOff(const RestoreTrouble& t, core::TimePoint now) {
  return "its restore failed " + std::to_string(t.failures) +
         (t.failures == 1 ? " time (" : " times (") + t.error + "); tried again in " +
         core::FormatDuration(t.retry_at - now);
}

std::optional<std::string> HolderParker::RestoreWait(const observe::ParkAction& a,
                                                     const observe::GpuSample* sample,
                                                     core::TimePoint now) const {
  if (auto t = restore_trouble_.find(a.gpu);
      t != restore_trouble_.end() && now < t->second.retry_at) {
    return BackingOff(t->second, now);
  }
  if (sample == nullptr || !sample->memory_total || !sample->memory_used) return std::nullopt;
  const core::Bytes free =
      *sample->memory_total - std::min(*sample->memory_used, *sample->memory_total);
  if (free >= a.memory) return std::nullopt;
  std::string who;
  size_t named = 0;
  for (const observe::ObservedProcess& p : sample->processes) {
    if (named == 3) {
      who += " and " + std::to_string(sample->processes.size() - named) + " more";
      break;
    }
    who += (named++ == 0 ? "" : ", ") + Pid(p.pid, p.user) + " (" +
           core::FormatBytes(p.used_memory) + ")";
  }
  return "it needs " + core::FormatBytes(a.memory) + " on the GPU, which has " +
         core::FormatBytes(free) + " free: waiting for " +
         (who.empty() ? std::string("its memory") : who) + " to free it";
}

void HolderParker::Park(const observe::ParkAction& a, const cluster::Log& log) {
  const std::string where = Pid(a.pid, a.user) + " on " + a.gpu.str();
  const std::optional<core::TimePoint> started = ProcessStartTime(a.pid, options_.proc_root);
  if (!started || !ProcessCpuTime(a.pid, options_.proc_root)) {
    planner_.ParkFailed(a.gpu, clock_.Now());
    log("not parking " + where + ": it exited");
    if (metrics_ != nullptr) metrics_->Parking("refused");
    Tell("holder_parking_notice", a.gpu, a.user, false, "not parked: it exited");
    return;
  }
  // On record before the driver is asked: a daemon killed mid-park finds
  // the holder at its restart, parked or locked, and never loses it.
  parked_[a.gpu] = {a.pid, started, a.user, a.memory, clock_.Now(), false};
  Save(log);
  const auto lock_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.config.lock_timeout);
  Call(a, true,
       [this, pid = a.pid, lock_timeout] { return DriverResult{cuda_->Park(pid, lock_timeout)}; });
}

void HolderParker::ParkDone(const observe::ParkAction& a, const DriverResult& r,
                            const cluster::Log& log) {
  const std::string where = Pid(a.pid, a.user) + " on " + a.gpu.str();
  if (!r.status.ok()) {
    parked_.erase(a.gpu);
    Save(log);
    planner_.ParkFailed(a.gpu, clock_.Now());
    log("could not park " + where + ": " + r.status.message() + "; tried again in " +
        core::FormatDuration(options_.config.park_idle_timeout));
    if (metrics_ != nullptr) metrics_->Parking("park_failed");
    Tell("holder_parking_notice", a.gpu, a.user, false, "not parked: " + r.status.message());
    return;
  }
  const core::TimePoint at = clock_.Now();
  parked_[a.gpu].done = true;
  parked_[a.gpu].at = at;
  Save(log);
  // Its CPU time from now on says whether it wakes: the driver's copy runs
  // in the holder's own process and counts as its CPU time (80 GiB: 43 s).
  planner_.Parked(a.gpu, ProcessCpuTime(a.pid, options_.proc_root).value_or(core::Duration{}), at);
  const std::string what = "parked " + where + ": " + core::FormatBytes(a.memory) +
                           " moved to host memory in " + Millis(r.took) + " (" + a.reason +
                           "); the GPU is lent whole until it wakes";
  log(what);
  if (record_) record_("parked", a.gpu, a.user, what);
  if (metrics_ != nullptr) metrics_->Parking("parked");
  Tell("holder_parking_notice", a.gpu, a.user, false, what);
  Tell("holder_parked", a.gpu, a.user, true,
       what + "; it comes back when it uses the CPU, or with `gleaner unpark " + a.gpu.str() + "`");
}

void HolderParker::Restore(const observe::ParkAction& a, const cluster::Log& log) {
  if (cuda_ == nullptr) {
    RestoreDone(a, {core::Unavailable("the CUDA driver's checkpoint API cannot be opened")}, log);
    return;
  }
  Call(a, false, [this, pid = a.pid] {
    if (const auto state = cuda_->State(pid);
        state.ok() && *state == gpu::CudaProcessState::kRunning) {
      return DriverResult{core::Status::Ok(), {}, true};
    }
    return DriverResult{cuda_->Restore(pid)};
  });
}

void HolderParker::RestoreDone(const observe::ParkAction& a, const DriverResult& r,
                               const cluster::Log& log) {
  const std::string where = Pid(a.pid, a.user) + " on " + a.gpu.str();
  if (!r.status.ok()) {
    if (metrics_ != nullptr) metrics_->Parking("restore_failed");
    const core::TimePoint now = clock_.Now();
    RestoreTrouble& t = restore_trouble_[a.gpu];
    ++t.failures;
    t.error = r.status.message();
    t.retry_at = now + RestoreBackOff(t.failures);
    const std::string what = "restoring " + where + " failed (" + std::to_string(t.failures) +
                             (t.failures == 1 ? " time): " : " times): ") + t.error +
                             "; tried again in " + core::FormatDuration(t.retry_at - now);
    log(what);
    if (t.failures == 1 || now - t.alerted_at >= kRestoreAlertRepeat) {
      t.alerted_at = now;
      Tell("holder_restore_failed", a.gpu, a.user, true,
           what + "; while it fails its GPU is held for it. `gleaner unpark " + a.gpu.str() +
               " --give-up` leaves it frozen for its user to end, `--kill` ends it");
    }
    return;
  }
  const std::string how = r.found_running ? "found running (restored outside gleaner)" : "restored";
  const core::TimePoint now = clock_.Now();
  const auto since = restoring_.find(a.gpu);
  const core::Duration waited = since == restoring_.end() ? core::Duration{} : now - since->second;
  const std::string what = where + " " + how + ": " + core::FormatBytes(a.memory) +
                           " back on the GPU in " + Millis(r.took) + "; it waited " +
                           core::FormatDuration(waited) + " (" + a.reason + ")";
  log(what);
  if (record_) record_("restored", a.gpu, a.user, what);
  if (metrics_ != nullptr) {
    metrics_->Parking("restored");
    metrics_->HolderRestored(waited);
  }
  planner_.Release(a.gpu);
  parked_.erase(a.gpu);
  restoring_.erase(a.gpu);
  Save(log);
  Tell("holder_parked", a.gpu, a.user, false, where + " " + how);
  if (restore_trouble_.erase(a.gpu) > 0) {
    Tell("holder_restore_failed", a.gpu, a.user, false, where + " " + how);
  }
}

void HolderParker::GiveUpNow(const core::GpuUuid& gpu, const GiveUpAsk& ask,
                             const cluster::Log& log) {
  const auto p = parked_.find(gpu);
  if (p == parked_.end()) {
    log("nothing to give up on GPU " + gpu.str() + ": its holder was restored, or exited");
    return;
  }
  const Parked holder = p->second;
  const std::string where = Pid(holder.pid, holder.user) + " on " + gpu.str();
  const std::string by = ask.by.empty() ? "an admin" : ask.by;
  std::string what;
  if (!ask.kill) {
    what = "left frozen with " + core::FormatBytes(holder.memory) + " in host memory for " +
           (holder.user.empty() ? std::string("its user") : holder.user) + " to end (`kill " +
           std::to_string(holder.pid) + "`)";
  } else if (const auto started = ProcessStartTime(holder.pid, options_.proc_root); !started) {
    what = "it had exited";
  } else if (!holder.started_at || *started != *holder.started_at) {
    // Pids are reused: only the very process parked is ended.
    what = "not killed: pid " + std::to_string(holder.pid) +
           " may be another process now (its start time is not the parked one's)";
  } else if (::kill(static_cast<pid_t>(holder.pid), SIGKILL) != 0) {
    what = std::string("not killed: ") + std::strerror(errno);
  } else {
    what = "ended (SIGKILL)";
  }
  planner_.Release(gpu);
  parked_.erase(gpu);
  restoring_.erase(gpu);
  waiting_.erase(gpu);
  const bool was_failing = restore_trouble_.erase(gpu) > 0;
  Save(log);
  const std::string text = by + " gave up restoring " + where + ": " + what + "; its GPU is free";
  log(text);
  if (record_) record_("parking_given_up", gpu, holder.user, text);
  if (metrics_ != nullptr) metrics_->Parking("given_up");
  Tell("holder_parked", gpu, holder.user, false, text);
  if (was_failing) Tell("holder_restore_failed", gpu, holder.user, false, text);
}

void HolderParker::Call(const observe::ParkAction& a, bool park,
                        std::function<DriverResult()> driver) {
  // Deferred (run at FinishCalls, in the pass) where no thread can be had.
  calls_[a.gpu] = {
      a, park,
      std::async(std::launch::async | std::launch::deferred, [this, driver = std::move(driver)] {
        core::MutexLock lock(driver_mu_);
        const auto t0 = std::chrono::steady_clock::now();
        DriverResult r = driver();
        r.took = std::chrono::steady_clock::now() - t0;
        return r;
      })};
}

void HolderParker::FinishCalls(std::chrono::milliseconds wait, const cluster::Log& log) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (auto it = calls_.begin(); it != calls_.end();) {
    DriverCall& c = it->second;
    if (c.result.wait_until(deadline) == std::future_status::timeout) {
      if (!c.said_under_way) {
        c.said_under_way = true;
        log((c.park ? "parking " : "restoring ") + Pid(c.action.pid, c.action.user) + " on " +
            c.action.gpu.str() + ": " + core::FormatBytes(c.action.memory) +
            (c.park ? " moving to host memory" : " moving back to the GPU") +
            "; the other GPUs are served meanwhile");
      }
      ++it;
      continue;
    }
    const DriverResult r = c.result.get();
    const observe::ParkAction a = c.action;
    const bool park = c.park;
    it = calls_.erase(it);
    if (park) {
      ParkDone(a, r, log);
    } else {
      RestoreDone(a, r, log);
    }
  }
}

std::map<core::GpuUuid, observe::HolderParking> HolderParker::Parkings() const {
  core::MutexLock lock(mu_);
  return parkings_;
}

core::Result<core::GpuUuid> HolderParker::Resolve(const std::string& gpu) const {
  const auto named = std::find_if(seen_.begin(), seen_.end(), [&](const auto& g) {
    return g.first.str() == gpu || std::to_string(g.second.index) == gpu;
  });
  if (named == seen_.end()) {
    return core::NotFound("no GPU " + gpu + " on this host; `gleaner gpus` lists them");
  }
  return named->first;
}

core::Status HolderParker::MaySpeakFor(const core::GpuUuid& gpu, const std::string& user,
                                       bool admin) const {
  std::set<std::string> holders = seen_.at(gpu).users;
  if (auto p = parkings_.find(gpu); p != parkings_.end() && !p->second.user.empty()) {
    holders.insert(p->second.user);
  }
  if (admin || holders.contains(user)) return core::Status::Ok();
  std::string who;
  for (const std::string& h : holders) who += (who.empty() ? "" : ", ") + h;
  return core::PermissionDenied("GPU " + gpu.str() + " is held by " +
                                (who.empty() ? std::string("no one") : who) +
                                ": only they (or root) may keep or unpark it");
}

core::Status HolderParker::Keep(const std::string& gpu, const std::string& user, bool admin) {
  core::MutexLock lock(mu_);
  GLEANER_ASSIGN_OR_RETURN(const core::GpuUuid uuid, Resolve(gpu));
  const auto parked = parkings_.find(uuid);
  if (!planner_.config().enabled && parked == parkings_.end()) {
    return core::Status(core::StatusCode::kFailedPrecondition,
                        "nothing is parked on this host ([parking] is off in gleaner.toml, or the "
                        "CUDA driver has no checkpoint API): nothing to keep");
  }
  GLEANER_RETURN_IF_ERROR(MaySpeakFor(uuid, user, admin));
  if (parked != parkings_.end() && parked->second.phase != observe::HolderParking::Phase::kNotice) {
    unpark_asked_.insert(uuid);  // kept means on the GPU: back it comes
    return core::Status::Ok();
  }
  const std::vector<uint32_t>& pids = seen_.at(uuid).pids;
  if (pids.empty()) {
    return core::Status(core::StatusCode::kFailedPrecondition,
                        "no process holds GPU " + gpu + ": nothing to keep");
  }
  kept_[uuid] = pids;
  return core::Status::Ok();
}

core::Status HolderParker::GiveUp(const std::string& gpu, const std::string& user, bool admin,
                                  bool kill) {
  core::MutexLock lock(mu_);
  GLEANER_ASSIGN_OR_RETURN(const core::GpuUuid uuid, Resolve(gpu));
  const auto parked = parkings_.find(uuid);
  if (parked == parkings_.end() || parked->second.phase == observe::HolderParking::Phase::kNotice) {
    return core::NotFound("no holder is parked on GPU " + gpu);
  }
  if (!admin) {
    return core::PermissionDenied("only root (an admin) may give up on GPU " + gpu +
                                  "'s parked holder; its user may end it, "
                                  "or bring it back with `gleaner unpark " +
                                  gpu + "`");
  }
  give_up_asked_[uuid] = {kill, user};
  return core::Status::Ok();
}

core::Status HolderParker::Ask(observe::HolderAsk ask, const std::string& gpu,
                               const std::string& user, bool admin) {
  switch (ask) {
    case observe::HolderAsk::kKeep:
      return Keep(gpu, user, admin);
    case observe::HolderAsk::kUnpark:
      return Unpark(gpu, user, admin);
    case observe::HolderAsk::kGiveUp:
    case observe::HolderAsk::kKill:
      return GiveUp(gpu, user, admin, ask == observe::HolderAsk::kKill);
  }
  return core::InvalidArgument("unknown ask");
}

core::Status HolderParker::Unpark(const std::string& gpu, const std::string& user, bool admin) {
  core::MutexLock lock(mu_);
  GLEANER_ASSIGN_OR_RETURN(const core::GpuUuid uuid, Resolve(gpu));
  const auto parked = parkings_.find(uuid);
  if (parked == parkings_.end() || parked->second.phase == observe::HolderParking::Phase::kNotice) {
    return core::NotFound("no holder is parked on GPU " + gpu);
  }
  GLEANER_RETURN_IF_ERROR(MaySpeakFor(uuid, user, admin));
  unpark_asked_.insert(uuid);
  return core::Status::Ok();
}

}  // namespace gleaner::agent
