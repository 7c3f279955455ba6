#include "observe/lending.h"

#include "core/format.h"

namespace gleaner::observe {

std::optional<std::string> ClaimOf(const Verdict& v) {
  // A shared GPU's foreign processes are the holder it was lent beside; so
  // are those of a GPU that lends beside its holder (the pass a job starts
  // on saw no job yet).
  if ((v.evidence.foreign_processes > 0 && v.state != GpuState::kShared && !LendableBeside(v)) ||
      v.state == GpuState::kProtected || v.state == GpuState::kUnhealthy ||
      v.state == GpuState::kReserved ||
      (v.evidence.parking && v.evidence.parking->phase == HolderParking::Phase::kRestoring)) {
    return v.evidence.reason;
  }
  return std::nullopt;
}

bool MayLend(const Verdict& v, bool held_by_placed_job) {
  // Outside a pilot's allow-list nothing new is lent; a job placed before
  // runs on.
  if (held_by_placed_job) return !ClaimOf(v);
  return v.evidence.lend_blocked.empty() && (v.state == GpuState::kIdle || LendableBeside(v));
}

std::string ShortQuietBlock(const std::optional<QuietForecast>& forecast, core::Duration min) {
  if (!forecast || min.count() <= 0 || forecast->p80 >= min) return "";
  return "its quiet is expected to last only " + core::FormatDuration(forecast->p80) +
         " at p80, under the " + core::FormatDuration(min) +
         " worth lending ([idle] min_expected_quiet_s)";
}

bool LendableBeside(const Verdict& v) {
  return v.state == GpuState::kHeldIdle && v.evidence.lend_blocked.empty() &&
         v.evidence.beside_holder && v.evidence.beside_holder->lendable > core::Bytes();
}

core::Bytes LendMemory(const Verdict& v) {
  const bool beside = LendableBeside(v) || v.state == GpuState::kShared;
  return beside && v.evidence.beside_holder ? v.evidence.beside_holder->lendable : core::Bytes();
}

bool LendAllowList::Allows(const std::string& host, uint32_t index,
                           const core::GpuUuid& uuid) const {
  if (hosts.empty() && gpus.empty()) return true;
  for (const std::string& h : hosts) {
    if (h == host) return true;
  }
  const std::string at = host + ":" + std::to_string(index);
  for (const std::string& g : gpus) {
    if (g == at || g == uuid.str()) return true;
  }
  return false;
}

}  // namespace gleaner::observe
