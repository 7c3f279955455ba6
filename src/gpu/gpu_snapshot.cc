#include "gpu/gpu_snapshot.h"

#include <string>
#include <vector>

#include "core/enum_names.h"

namespace gleaner::gpu {

constexpr auto kUnreadableNames = core::MakeEnumNames<Unreadable>(
    {
        {Unreadable::kNotSupported, "not_supported"},
        {Unreadable::kNoPermission, "no_permission"},
        {Unreadable::kGpuLost, "gpu_lost"},
        {Unreadable::kError, "error"},
    },
    "error");

std::string_view UnreadableName(Unreadable why) { return kUnreadableNames.Name(why); }

constexpr auto kGpuHealthNames = core::MakeEnumNames<GpuHealth>(
    {
        {GpuHealth::kOk, "ok"},
        {GpuHealth::kNoPermission, "no_permission"},
        {GpuHealth::kLost, "lost"},
        {GpuHealth::kError, "error"},
        {GpuHealth::kFaulty, "faulty"},
    },
    "error");

std::string_view GpuHealthName(GpuHealth health) { return kGpuHealthNames.Name(health); }

bool IsApplicationXid(uint32_t xid) {
  return xid == 13 || xid == 31 || xid == 43 || xid == 45 || xid == 68;
}

void JudgeErrors(GpuSnapshot& s) {
  // Judged afresh each time: only this function makes a GPU faulty.
  if (s.health == GpuHealth::kFaulty) {
    s.health = GpuHealth::kOk;
    s.health_detail.clear();
  }
  if (s.health != GpuHealth::kOk) return;
  const GpuErrors& e = s.errors;
  std::vector<std::string> faults;
  if (const uint64_t n = e.ecc_uncorrected_volatile.value_or(0); n > 0) {
    faults.push_back(std::to_string(n) +
                     " uncorrected ECC error(s) since the driver loaded: drain it and reset the "
                     "GPU (nvidia-smi -r)");
  }
  if (e.remap_failed.value_or(false)) {
    faults.push_back("a memory row remap failed: the GPU needs replacing");
  } else if (e.remap_pending.value_or(false)) {
    faults.push_back("a memory row remap is pending: reset the GPU to apply it");
  }
  if (e.retirement_pending.value_or(false)) {
    faults.push_back("a memory page retirement is pending: reset the GPU to apply it");
  }
  if (const uint32_t xid = e.fatal_xid.value_or(0); xid != 0) {
    faults.push_back("the driver reported Xid " + std::to_string(xid) +
                     " (see NVIDIA's Xid catalogue): check the kernel log, reset the GPU, then "
                     "`gleaner gpus --forget-fault " +
                     s.uuid.str() + "` and restart gleaner (a reboot forgets it too)");
  }
  if (faults.empty()) return;
  s.health = GpuHealth::kFaulty;
  s.health_detail.clear();
  for (const std::string& f : faults) {
    s.health_detail += (s.health_detail.empty() ? "" : "; ") + f;
  }
}

void FailAllReadings(GpuSnapshot& s, Unreadable why, const std::string& detail) {
  s.memory_total = s.memory_used = Reading<core::Bytes>::Fail(why, detail);
  s.utilization_gpu_pct = s.utilization_memory_pct = s.sm_clock_mhz =
      Reading<uint32_t>::Fail(why, detail);
  s.temperature_c = Reading<int32_t>::Fail(why, detail);
  s.power_draw_w = s.power_limit_w = Reading<double>::Fail(why, detail);
  s.processes = Reading<std::vector<GpuProcess>>::Fail(why, detail);
  GpuErrors& e = s.errors;
  e.ecc_corrected_volatile = e.ecc_uncorrected_volatile = e.ecc_corrected_aggregate =
      e.ecc_uncorrected_aggregate = e.clock_event_reasons = Reading<uint64_t>::Fail(why, detail);
  e.pcie_replays = e.remapped_rows_corrected = e.remapped_rows_uncorrected = e.last_xid =
      e.xid_count = e.fatal_xid = Reading<uint32_t>::Fail(why, detail);
  e.retirement_pending = e.remap_pending = e.remap_failed = Reading<bool>::Fail(why, detail);
}

constexpr auto kPcieLevelNames = core::MakeEnumNames<PcieLevel>(
    {
        {PcieLevel::kSameBoard, "same_board"},
        {PcieLevel::kSinglePcieSwitch, "pcie_switch"},
        {PcieLevel::kMultiplePcieSwitches, "pcie_switches"},
        {PcieLevel::kHostBridge, "host_bridge"},
        {PcieLevel::kSameNumaNode, "numa_node"},
        {PcieLevel::kCrossSocket, "cross_socket"},
    },
    "unknown");

std::string_view PcieLevelName(PcieLevel level) { return kPcieLevelNames.Name(level); }

}  // namespace gleaner::gpu
