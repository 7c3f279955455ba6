#include "gpu/fake_backend.h"

#include <algorithm>
#include <cmath>

#include "gpu/nvml/nvml_errors.h"

namespace gleaner::gpu {
namespace {

// Reads `value` unless the scenario makes `field` fail now; the failure shows
// exactly as the NVML backend would show the fake driver's return code.
template <typename T>
Reading<T> Read(const ScenarioGpuState& state, ScenarioField field, T value, bool* lost) {
  if (auto e = state.ErrorFor(field)) {
    const nvmlReturn_t rc = nvml::ToNvmlReturn(*e);
    if (rc == NVML_ERROR_GPU_IS_LOST) *lost = true;
    return Reading<T>::Fail(nvml::ToUnreadable(rc), std::string(nvml::ReturnCodeName(rc)));
  }
  return Reading<T>::Of(std::move(value));
}

// The frame's error counters, each failing as its NVML call would.
void ReadErrors(const ScenarioGpuState& state, GpuErrors& out, bool* lost) {
  const ScenarioErrors& e = state.frame().errors;
  out.ecc_corrected_volatile = Read(state, ScenarioField::kEcc, e.ecc_corrected_volatile, lost);
  out.ecc_uncorrected_volatile = Read(state, ScenarioField::kEcc, e.ecc_uncorrected_volatile, lost);
  out.ecc_corrected_aggregate = Read(state, ScenarioField::kEcc, e.ecc_corrected_aggregate, lost);
  out.ecc_uncorrected_aggregate =
      Read(state, ScenarioField::kEcc, e.ecc_uncorrected_aggregate, lost);
  out.pcie_replays = Read(state, ScenarioField::kPcieReplays, e.pcie_replays, lost);
  out.retirement_pending = Read(state, ScenarioField::kRetiredPages, e.retirement_pending, lost);
  out.remapped_rows_corrected =
      Read(state, ScenarioField::kRemappedRows, e.remapped_rows_corrected, lost);
  out.remapped_rows_uncorrected =
      Read(state, ScenarioField::kRemappedRows, e.remapped_rows_uncorrected, lost);
  out.remap_pending = Read(state, ScenarioField::kRemappedRows, e.remap_pending, lost);
  out.remap_failed = Read(state, ScenarioField::kRemappedRows, e.remap_failed, lost);
  out.clock_event_reasons = Read(state, ScenarioField::kClockEvents, e.clock_event_reasons, lost);
  // Xids were delivered before: a GPU lost since still shows them (Xid 79
  // is how most GPUs are lost).
  const ScenarioGpuState::Xids xids = state.XidsSoFar();
  if (state.lost()) {
    out.last_xid = Reading<uint32_t>::Of(xids.last);
    out.xid_count = Reading<uint32_t>::Of(xids.count);
    out.fatal_xid = Reading<uint32_t>::Of(xids.fatal);
  } else {
    out.last_xid = Read(state, ScenarioField::kXidEvents, xids.last, lost);
    out.xid_count = Read(state, ScenarioField::kXidEvents, xids.count, lost);
    out.fatal_xid = Read(state, ScenarioField::kXidEvents, xids.fatal, lost);
  }
}

// NVML reports power in whole milliwatts; round the same way.
double WholeMilliwatts(double watts) { return std::round(watts * 1000) / 1000; }

}  // namespace

core::Result<std::unique_ptr<FakeBackend>> FakeBackend::Create(Scenario scenario,
                                                               const core::Clock& clock) {
  if (auto e = scenario.driver.init_error) {
    return core::Unavailable("the scenario's NVIDIA driver failed to initialise: " +
                             std::string(ScenarioErrorName(*e)));
  }
  return std::unique_ptr<FakeBackend>(new FakeBackend(std::move(scenario), clock));
}

FakeBackend::FakeBackend(Scenario scenario, const core::Clock& clock)
    : scenario_(std::move(scenario)), clock_(clock), start_(clock.Now()) {
  driver_.source = "fake:" + scenario_.name;
  driver_.driver_version = Reading<std::string>::Of(scenario_.driver.version);
  driver_.nvml_version = Reading<std::string>::Of(scenario_.driver.nvml_version);
  driver_.cuda_driver_version = Reading<int32_t>::Of(scenario_.driver.cuda_version);
  for (size_t i = 0; i < scenario_.gpus.size(); ++i) {
    const ScenarioGpu& gpu = scenario_.gpus[i];
    ScenarioGpuState state = GpuStateAt(scenario_, i, 0);
    GpuSnapshot s;
    s.index = static_cast<uint32_t>(i);
    if (gpu.no_permission || state.lost()) {
      const Unreadable why = gpu.no_permission ? Unreadable::kNoPermission : Unreadable::kGpuLost;
      s.health = gpu.no_permission ? GpuHealth::kNoPermission : GpuHealth::kLost;
      s.health_detail = gpu.no_permission ? "NO_PERMISSION" : "GPU_IS_LOST";
      s.name = s.pci_bus_id = Reading<std::string>::Fail(why, s.health_detail);
      FailAllReadings(s, why, s.health_detail);
    } else {
      bool lost = false;
      s.uuid = core::GpuUuid(gpu.uuid);
      s.name = Read(state, ScenarioField::kName, gpu.name, &lost);
      s.pci_bus_id = Read(state, ScenarioField::kPciBusId, gpu.pci_bus_id, &lost);
    }
    attached_.push_back(std::move(s));
  }
}

double FakeBackend::ElapsedSeconds() const { return core::ToSecondsDouble(clock_.Now() - start_); }

core::Result<std::vector<GpuSnapshot>> FakeBackend::Snapshot() {
  return SnapshotAt(ElapsedSeconds());
}

core::Result<std::vector<GpuSnapshot>> FakeBackend::Recall(core::Duration ago) {
  return SnapshotAt(ElapsedSeconds() - core::ToSecondsDouble(ago));
}

std::vector<GpuSnapshot> FakeBackend::SnapshotAt(double t) const {
  std::vector<GpuSnapshot> out;
  for (size_t i = 0; i < attached_.size(); ++i) {
    GpuSnapshot s = attached_[i];
    if (s.uuid.empty()) {  // never attached: its readings were failed at start
      out.push_back(std::move(s));
      continue;
    }
    ScenarioGpuState state = GpuStateAt(scenario_, i, t);
    const ScenarioFrame& f = state.frame();
    bool lost = state.lost();
    s.memory_total = Read(state, ScenarioField::kMemory, state.gpu().memory_total, &lost);
    s.memory_used = Read(state, ScenarioField::kMemory, f.memory_used, &lost);
    s.utilization_gpu_pct = Read(state, ScenarioField::kUtilization, f.utilization_gpu_pct, &lost);
    s.utilization_memory_pct =
        Read(state, ScenarioField::kUtilization, f.utilization_memory_pct, &lost);
    s.temperature_c = Read(state, ScenarioField::kTemperature, f.temperature_c, &lost);
    s.power_draw_w = Read(state, ScenarioField::kPower, WholeMilliwatts(f.power_draw_w), &lost);
    s.power_limit_w =
        Read(state, ScenarioField::kPowerLimit, WholeMilliwatts(state.gpu().power_limit_w), &lost);
    s.sm_clock_mhz = Read(state, ScenarioField::kSmClock, f.sm_clock_mhz, &lost);
    std::vector<GpuProcess> processes;
    std::vector<ScenarioProcess> listed = f.processes;
    if (auto j = joined_.find(static_cast<uint32_t>(i)); j != joined_.end()) {
      listed.insert(listed.end(), j->second.begin(), j->second.end());
    }
    for (const ScenarioProcess& p : listed) {
      processes.push_back({p.pid, Reading<core::Bytes>::Of(p.used_memory),
                           Reading<uint32_t>::Of(ProcessUtilization(p, f)), p.compute, p.graphics});
    }
    std::sort(processes.begin(), processes.end(),
              [](const GpuProcess& a, const GpuProcess& b) { return a.pid < b.pid; });
    s.processes = Read(state, ScenarioField::kProcesses, std::move(processes), &lost);
    ReadErrors(state, s.errors, &lost);
    if (lost) {
      s.health = GpuHealth::kLost;
      s.health_detail = "GPU_IS_LOST";
    }
    JudgeErrors(s);
    out.push_back(std::move(s));
  }
  return out;
}

void FakeBackend::Join(uint32_t index, ScenarioProcess process) {
  joined_[index].push_back(std::move(process));
}

void FakeBackend::Leave(uint32_t index, uint32_t pid) {
  std::erase_if(joined_[index], [&](const ScenarioProcess& p) { return p.pid == pid; });
}

core::Result<std::vector<GpuLink>> FakeBackend::Topology() {
  const double t = ElapsedSeconds();
  std::vector<GpuLink> links;
  for (uint32_t a = 0; a < attached_.size(); ++a) {
    for (uint32_t b = a + 1; b < attached_.size(); ++b) {
      if (attached_[a].uuid.empty() || attached_[b].uuid.empty()) continue;
      GpuLink link{attached_[a].uuid, attached_[b].uuid,
                   Reading<PcieLevel>::Of(PcieLevelBetween(scenario_, a, b)),
                   Reading<bool>::Of(NvlinkBetween(scenario_, a, b))};
      if (GpuStateAt(scenario_, a, t).lost() || GpuStateAt(scenario_, b, t).lost()) {
        link.pcie = Reading<PcieLevel>::Fail(Unreadable::kGpuLost);
        link.nvlink = Reading<bool>::Fail(Unreadable::kGpuLost);
      }
      links.push_back(std::move(link));
    }
  }
  return links;
}

}  // namespace gleaner::gpu
