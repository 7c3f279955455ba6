#include "observe/colocation.h"

#include <algorithm>

#include "core/format.h"

namespace gleaner::observe {

void HolderPeakWindow::Add(core::TimePoint at, core::Bytes memory, core::Duration observed) {
  while (!peaks_.empty() && peaks_.back().second <= memory) peaks_.pop_back();
  peaks_.emplace_back(at, memory);
  seen_.emplace_back(at, observed);
  observed_ += observed;
}

HolderHistory HolderPeakWindow::At(core::TimePoint now) {
  const core::TimePoint from = now - window_;
  while (!peaks_.empty() && peaks_.front().first < from) peaks_.pop_front();
  while (!seen_.empty() && seen_.front().first < from) {
    observed_ -= seen_.front().second;
    seen_.pop_front();
  }
  return {peaks_.empty() ? core::Bytes{} : peaks_.front().second, observed_};
}

void HolderPeakWindow::Reset() {
  peaks_.clear();
  seen_.clear();
  observed_ = {};
}

Headroom HeadroomBeside(core::Bytes total, core::Bytes held_now, const HolderHistory& history,
                        const ColocationConfig& config) {
  Headroom h;
  h.history = history.observed;
  h.holder_peak = std::max(history.peak, held_now);
  h.margin = core::Bytes(static_cast<uint64_t>(static_cast<double>(total.count()) *
                                               std::clamp(config.margin_share, 0.0, 1.0)));
  if (history.observed < config.min_history) {
    h.reason = "holder seen for " + core::FormatDuration(history.observed) + " of the " +
               core::FormatDuration(config.min_history) + " needed to learn its peak";
    return h;
  }
  const core::Bytes left = total - h.holder_peak - h.margin;
  const std::string sum =
      core::FormatBytes(total) + " less its peak " + core::FormatBytes(h.holder_peak) + " in " +
      core::FormatDuration(history.observed) + " and a margin of " + core::FormatBytes(h.margin);
  // Under 1 GiB no job would fit: a CUDA context alone takes hundreds of MiB.
  if (left < core::Bytes::GiB(1)) {
    h.reason = "no room beside the holder: " + sum + " leaves " + core::FormatBytes(left);
    return h;
  }
  h.lendable = left;
  h.reason = core::FormatBytes(left) + " to lend beside the holder: " + sum;
  return h;
}

void HolderLearner::Learn(const MinuteRollup& m) {
  if (m.harvested > core::Duration{} || !m.memory_used_max) return;  // not the holder alone
  auto [it, added] =
      holders_.try_emplace(m.uuid, Holder{{}, HolderPeakWindow(config_.peak_window), {}});
  Holder& h = it->second;
  if (h.pids != m.pids) {
    h.pids = m.pids;
    h.peaks.Reset();
    h.first.reset();
  }
  if (h.pids.empty()) return;
  h.peaks.Add(m.minute, *m.memory_used_max, m.observed);
  if (!h.first) h.first = m.minute;
}

BesideHolder HolderLearner::Beside(const GpuSample& s, const Verdict& v) {
  BesideHolder b;
  std::set<uint32_t> pids;
  for (const ObservedProcess& p : s.processes) {
    if (p.gleaner_job) continue;
    pids.insert(p.pid);
    b.holder_memory = b.holder_memory + p.used_memory;
    if (!p.utilization_pct && b.reason.empty()) {
      b.reason = "the driver does not report process " + std::to_string(p.pid) +
                 "'s own utilization, so a job beside it could not tell it waking";
    }
  }
  if (v.state != GpuState::kHeldIdle || !s.memory_total) {
    b.reason = "not held idle";
    return b;
  }
  if (!b.reason.empty()) return b;
  // What the GPU says is used: the holder's processes and the driver's own
  // share, which the minutes it learned from counted too.
  b.holder_memory = std::max(b.holder_memory, s.memory_used.value_or(core::Bytes()));
  // Pids are reused, start times are not: a history that began a minute
  // or more before the holder's processes started is another process's.
  std::optional<core::TimePoint> started;
  for (const ObservedProcess& p : s.processes) {
    if (!p.gleaner_job && p.started_at)
      started = std::max(started.value_or(*p.started_at), *p.started_at);
  }
  HolderHistory history;
  if (auto h = holders_.find(s.uuid); h != holders_.end() && h->second.pids == pids) {
    if (started && h->second.first && *h->second.first + core::Seconds(60) <= *started) {
      h->second.peaks.Reset();
      h->second.first.reset();
    }
    history = h->second.peaks.At(s.at);
  }
  const Headroom room = HeadroomBeside(*s.memory_total, b.holder_memory, history, config_);
  b.lendable = core::Bytes::GiB(room.lendable.count() / core::Bytes::GiB(1).count());
  b.holder_peak = room.holder_peak;
  b.history = room.history;
  b.margin = room.margin;
  b.reason = room.reason;
  return b;
}

std::optional<std::string> SharedClaim(const Verdict& holder, core::Bytes holder_memory,
                                       core::Bytes lent_beside_peak) {
  if (holder.state != GpuState::kHeldIdle) {
    return "the holder is no longer idle: " + holder.evidence.reason;
  }
  if (holder_memory > lent_beside_peak) {
    return "the holder grew to " + core::FormatBytes(holder_memory) + ", past the peak of " +
           core::FormatBytes(lent_beside_peak) + " the loan was sized on";
  }
  return std::nullopt;
}

}  // namespace gleaner::observe
