#include "observe/parking.h"

#include <algorithm>

#include "core/format.h"

namespace gleaner::observe {
namespace {

// A parked holder wakes when its process uses this share of a CPU between
// two passes: a notebook kernel running a cell takes a whole core, while
// an idle one's heartbeats take a few milliseconds a second.
constexpr double kWakeCpuShare = 0.2;

std::string Pid(uint32_t pid) { return "process " + std::to_string(pid); }

}  // namespace

std::optional<std::string> ParkingPlanner::WhyNot(const ParkFacts& f,
                                                  std::optional<core::Bytes> host_available,
                                                  core::Bytes host_total,
                                                  core::TimePoint now) const {
  // Shared: still held idle, with a job beside the holder, which runs on
  // when the holder is parked (and leaves before it is restored).
  if (f.verdict.state != GpuState::kHeldIdle && f.verdict.state != GpuState::kShared) {
    return "it is no longer held idle";
  }
  if (now - f.verdict.since < config_.park_idle_timeout) {
    return "held idle for " + core::FormatDuration(now - f.verdict.since) + " of the " +
           core::FormatDuration(config_.park_idle_timeout) + " before parking";
  }
  if (f.holders.size() != 1) {
    // Locking one of several processes that share work hangs the others.
    return std::to_string(f.holders.size()) + " processes hold it; only a lone holder is parked";
  }
  const ObservedProcess& p = f.holders[0];
  if (std::find(config_.never_park_users.begin(), config_.never_park_users.end(), p.user) !=
      config_.never_park_users.end()) {
    return p.user + " opted out of parking";
  }
  if (f.kept) return "the holder asked to keep it";
  if (!host_available) return "the host's free memory is unknown";
  const core::Bytes margin(
      static_cast<uint64_t>(static_cast<double>(host_total.count()) *
                            std::clamp(config_.host_memory_margin_share, 0.0, 1.0)));
  if (*host_available < p.used_memory + margin) {
    return "host memory: " + core::FormatBytes(*host_available) + " free, " +
           core::FormatBytes(p.used_memory + margin) + " needed (what it holds, and a margin)";
  }
  return std::nullopt;
}

std::vector<ParkAction> ParkingPlanner::Plan(
    const std::vector<ParkFacts>& gpus, std::optional<core::Bytes> host_available,
    core::Bytes host_total, const std::function<std::optional<core::Duration>(uint32_t)>& cpu_time,
    core::TimePoint now) {
  std::vector<ParkAction> out;
  for (const ParkFacts& f : gpus) {
    const core::GpuUuid& gpu = f.verdict.uuid;
    auto t = tracks_.find(gpu);
    if (t != tracks_.end() && t->second.phase == Phase::kFailed &&
        now - t->second.since >= config_.park_idle_timeout) {
      tracks_.erase(t);  // tried long enough ago: it may be tried again
      t = tracks_.end();
    }
    if (t == tracks_.end()) {
      if (!config_.enabled || WhyNot(f, host_available, host_total, now)) continue;
      const ObservedProcess& p = f.holders[0];
      tracks_[gpu] = {Phase::kNoticed, p.pid, p.user, p.used_memory, now, {}, {}, {}};
      out.push_back({ParkAction::Kind::kNotify, gpu, p.pid, p.user, p.used_memory,
                     now + config_.notice,
                     Pid(p.pid) + (p.user.empty() ? "" : " of " + p.user) + " has held " +
                         core::FormatBytes(p.used_memory) + " idle for " +
                         core::FormatDuration(now - f.verdict.since) + "; it will be parked in " +
                         core::FormatDuration(config_.notice) +
                         " unless it computes or its user runs `gleaner keep`"});
      continue;
    }
    Track& tr = t->second;
    switch (tr.phase) {
      case Phase::kNoticed: {
        std::optional<std::string> why = WhyNot(f, host_available, host_total, now);
        if (!why && f.holders[0].pid != tr.pid) why = "another process holds it now";
        if (why) {
          out.push_back({ParkAction::Kind::kForget, gpu, tr.pid, tr.user, tr.memory, now,
                         "not parked: " + *why});
          tracks_.erase(t);
        } else if (now - tr.since >= config_.notice) {
          tr.phase = Phase::kParking;
          tr.memory = f.holders[0].used_memory;
          out.push_back({ParkAction::Kind::kPark, gpu, tr.pid, tr.user, tr.memory, now,
                         "held idle for " + core::FormatDuration(now - f.verdict.since) +
                             ", told " + core::FormatDuration(now - tr.since) + " ago"});
          tr.since = now;
        }
        break;
      }
      case Phase::kParked:
      case Phase::kRestoring: {
        const std::optional<core::Duration> cpu = cpu_time(tr.pid);
        if (!cpu) {
          out.push_back({ParkAction::Kind::kForget, gpu, tr.pid, tr.user, tr.memory, now,
                         Pid(tr.pid) + " exited while parked: nothing to restore"});
          tracks_.erase(t);
          break;
        }
        if (tr.phase == Phase::kRestoring) {
          out.push_back({ParkAction::Kind::kRestore, gpu, tr.pid, tr.user, tr.memory, now, tr.why});
          break;
        }
        std::string why;
        const core::Duration wall = now - tr.cpu_at;
        if (f.unpark_asked) {
          why = "asked to unpark";
        } else if (wall > core::Duration{} && core::ToSecondsDouble(*cpu - tr.cpu) >=
                                                  kWakeCpuShare * core::ToSecondsDouble(wall)) {
          why = Pid(tr.pid) + " uses the CPU again: it woke";
        } else if (config_.max_park > core::Duration{} && now - tr.since >= config_.max_park) {
          why = "parked for the most allowed, " + core::FormatDuration(config_.max_park);
        }
        tr.cpu = *cpu;
        tr.cpu_at = now;
        if (!why.empty()) {
          tr.phase = Phase::kRestoring;
          tr.why = why;
          out.push_back({ParkAction::Kind::kRestore, gpu, tr.pid, tr.user, tr.memory, now, why});
        }
        break;
      }
      case Phase::kParking:
      case Phase::kFailed:
        break;  // waiting for the daemon's word, or for the retry time
    }
  }
  return out;
}

void ParkingPlanner::Parked(const core::GpuUuid& gpu, core::Duration cpu_time, core::TimePoint at) {
  auto t = tracks_.find(gpu);
  if (t == tracks_.end()) return;
  t->second.phase = Phase::kParked;
  t->second.since = t->second.cpu_at = at;
  t->second.cpu = cpu_time;
}

void ParkingPlanner::ParkFailed(const core::GpuUuid& gpu, core::TimePoint at) {
  auto t = tracks_.find(gpu);
  if (t == tracks_.end()) return;
  t->second.phase = Phase::kFailed;
  t->second.since = at;
}

void ParkingPlanner::Release(const core::GpuUuid& gpu) { tracks_.erase(gpu); }

void ParkingPlanner::Adopt(const core::GpuUuid& gpu, uint32_t pid, std::string user,
                           core::Bytes memory, core::Duration cpu_time, core::TimePoint parked_at) {
  tracks_[gpu] = {Phase::kParked, pid, std::move(user), memory, parked_at, cpu_time, parked_at, {}};
}

std::map<core::GpuUuid, HolderParking> ParkingPlanner::Parkings() const {
  std::map<core::GpuUuid, HolderParking> out;
  for (const auto& [gpu, t] : tracks_) {
    using P = HolderParking::Phase;
    switch (t.phase) {
      case Phase::kNoticed:
        out[gpu] = {P::kNotice, t.pid, t.user, t.memory, t.since + config_.notice, {}, {}};
        break;
      case Phase::kParking:
        out[gpu] = {P::kParking, t.pid, t.user, t.memory, t.since, {}, {}};
        break;
      case Phase::kParked:
        out[gpu] = {P::kParked, t.pid, t.user, t.memory, t.since, {}, {}};
        break;
      case Phase::kRestoring:
        out[gpu] = {P::kRestoring, t.pid, t.user, t.memory, t.since, t.why, {}};
        break;
      case Phase::kFailed:
        break;  // it runs on as before
    }
  }
  return out;
}

}  // namespace gleaner::observe
