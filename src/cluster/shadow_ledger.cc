#include "cluster/shadow_ledger.h"

#include "core/format.h"

namespace gleaner::cluster {
namespace {

std::string GpuList(const std::vector<core::GpuUuid>& gpus) {
  std::string out;
  for (const core::GpuUuid& g : gpus) out += (out.empty() ? "" : ", ") + g.str();
  return out;
}

}  // namespace

void ShadowLedger::BeginPass(core::TimePoint now, const Log& log) {
  const core::Duration pass = pass_at_ ? now - *pass_at_ : core::Duration{};
  pass_at_ = now;
  for (auto it = runs_.begin(); it != runs_.end();) {
    OnBooks& b = it->second;
    const std::string job = "shadow: job " + std::to_string(b.run.job);
    if (!b.proposed) {
      ++totals_.vacated;
      log(job + " would have left " + GpuList(b.run.gpus) + " of host " + b.run.host + " after " +
          core::FormatDuration(now - b.since) + ": they are no longer idle");
      it = runs_.erase(it);
      continue;
    }
    totals_.gpu_seconds += static_cast<double>(b.run.gpus.size()) * core::ToSecondsDouble(pass);
    b.proposed = false;
    if (b.run.runtime && now - b.since >= *b.run.runtime) {
      ++totals_.finished;
      done_.insert(b.run.job);
      log(job + " would have finished on host " + b.run.host + " after " +
          core::FormatDuration(now - b.since));
      it = runs_.erase(it);
      continue;
    }
    ++it;
  }
}

bool ShadowLedger::WouldStart(const Run& run, core::TimePoint now, const Log& log) {
  if (done_.contains(run.job)) return false;
  auto it = runs_.find(run.job);
  if (it != runs_.end() && it->second.run.gpus == run.gpus) {
    it->second.proposed = true;
    return true;
  }
  if (it != runs_.end()) ++totals_.vacated;  // moved: it would have restarted elsewhere
  ++totals_.starts;
  runs_[run.job] = {run, now, true};
  log("shadow: job " + std::to_string(run.job) + " of " + run.user + " would start on " +
      GpuList(run.gpus) + " of host " + run.host + " (shadow mode: nothing starts)");
  return true;
}

ShadowLedger::Totals ShadowLedger::Read() const {
  Totals t = totals_;
  t.gpus_now = 0;
  for (const auto& [id, b] : runs_) t.gpus_now += static_cast<int64_t>(b.run.gpus.size());
  return t;
}

}  // namespace gleaner::cluster
