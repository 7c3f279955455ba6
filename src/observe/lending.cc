#include "observe/lending.h"

namespace gleaner::observe {

std::optional<std::string> ClaimOf(const Verdict& v) {
  if (v.evidence.foreign_processes > 0 || v.state == GpuState::kProtected ||
      v.state == GpuState::kUnhealthy || v.state == GpuState::kReserved) {
    return v.evidence.reason;
  }
  return std::nullopt;
}

bool MayLend(const Verdict& v, bool held_by_placed_job) {
  return held_by_placed_job ? !ClaimOf(v) : v.state == GpuState::kIdle;
}

}  // namespace gleaner::observe
