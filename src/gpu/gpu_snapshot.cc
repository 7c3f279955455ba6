#include "gpu/gpu_snapshot.h"

namespace gleaner::gpu {

std::string_view UnreadableName(Unreadable why) {
  switch (why) {
    case Unreadable::kNotSupported:
      return "not_supported";
    case Unreadable::kNoPermission:
      return "no_permission";
    case Unreadable::kGpuLost:
      return "gpu_lost";
    case Unreadable::kError:
      return "error";
  }
  return "error";
}

std::string_view GpuHealthName(GpuHealth health) {
  switch (health) {
    case GpuHealth::kOk:
      return "ok";
    case GpuHealth::kNoPermission:
      return "no_permission";
    case GpuHealth::kLost:
      return "lost";
    case GpuHealth::kError:
      return "error";
  }
  return "error";
}

void FailAllReadings(GpuSnapshot& s, Unreadable why, const std::string& detail) {
  s.memory_total = s.memory_used = Reading<core::Bytes>::Fail(why, detail);
  s.utilization_gpu_pct = s.utilization_memory_pct = s.sm_clock_mhz =
      Reading<uint32_t>::Fail(why, detail);
  s.temperature_c = Reading<int32_t>::Fail(why, detail);
  s.power_draw_w = s.power_limit_w = Reading<double>::Fail(why, detail);
  s.processes = Reading<std::vector<GpuProcess>>::Fail(why, detail);
}

std::string_view PcieLevelName(PcieLevel level) {
  switch (level) {
    case PcieLevel::kSameBoard:
      return "same_board";
    case PcieLevel::kSinglePcieSwitch:
      return "pcie_switch";
    case PcieLevel::kMultiplePcieSwitches:
      return "pcie_switches";
    case PcieLevel::kHostBridge:
      return "host_bridge";
    case PcieLevel::kSameNumaNode:
      return "numa_node";
    case PcieLevel::kCrossSocket:
      return "cross_socket";
  }
  return "unknown";
}

}  // namespace gleaner::gpu
