#include "gpu/nvml/nvml_backend.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

#include "gpu/nvml/nvml_errors.h"

namespace gleaner::gpu {
namespace {

using core::Bytes;
using nvml::ProcessInfoLayout;

// Turns one call's outcome into a Reading, noting GPU loss for the health.
template <typename T>
Reading<T> Field(nvmlReturn_t rc, T value, bool* lost) {
  if (rc == NVML_SUCCESS) return Reading<T>::Of(std::move(value));
  if (rc == NVML_ERROR_GPU_IS_LOST) *lost = true;
  return Reading<T>::Fail(nvml::ToUnreadable(rc), std::string(nvml::ReturnCodeName(rc)));
}

template <typename T>
Reading<T> Missing(const char* symbol) {
  return Reading<T>::Fail(Unreadable::kNotSupported, std::string("driver lacks ") + symbol);
}

// A string NVML wrote into `buf`, even if it forgot the terminating NUL.
template <size_t N>
std::string FromBuffer(char (&buf)[N]) {
  return std::string(buf, strnlen(buf, N));
}

Reading<std::string> ReadString(nvml::StringFn fn, const char* symbol) {
  if (!fn) return Missing<std::string>(symbol);
  char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  bool unused = false;
  const nvmlReturn_t rc = fn(buf, sizeof buf);
  return Field<std::string>(rc, FromBuffer(buf), &unused);
}

// NVML reports milliwatts.
Reading<double> Watts(nvml::DeviceUintFn fn, nvmlDevice_t h, bool* lost) {
  unsigned milliwatts = 0;
  const nvmlReturn_t rc = fn(h, &milliwatts);
  return Field(rc, milliwatts / 1000.0, lost);
}

// NVML writes "00000000:18:00.0"; everything else on Linux (sysfs, Slurm,
// Kubernetes) says "0000:18:00.0".
std::string SysfsBusId(const nvmlPciInfo_t& pci) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.0", pci.domain & 0xffffu, pci.bus & 0xffu,
                pci.device & 0xffu);
  return buf;
}

struct RawProcess {
  uint32_t pid;
  unsigned long long used;
};

std::vector<RawProcess> Decode(const unsigned char* data, unsigned count,
                               ProcessInfoLayout layout) {
  std::vector<RawProcess> out;
  const size_t stride = nvml::EntrySize(layout);
  for (unsigned i = 0; i < count; ++i) {
    RawProcess p{};
    // pid at offset 0 and usedGpuMemory at offset 8 in every layout.
    std::memcpy(&p.pid, data + i * stride, sizeof p.pid);
    std::memcpy(&p.used, data + i * stride + 8, sizeof p.used);
    out.push_back(p);
  }
  return out;
}

bool Plausible(const RawProcess& p, Bytes total) {
  return p.pid != 0 && (p.used == NVML_VALUE_NOT_AVAILABLE || p.used <= total.count());
}

// True when a list decodes like entries written with another stride than
// the one assumed: the first entry (same offsets in every layout) is sound,
// a later one is not.
bool LooksMisaligned(const std::vector<RawProcess>& list, Bytes total) {
  if (list.size() < 2 || !Plausible(list[0], total)) return false;
  return std::any_of(list.begin() + 1, list.end(),
                     [&](const RawProcess& p) { return !Plausible(p, total); });
}

// Reads one process list. The buffer always has room for the largest entry
// layout, so a driver that writes 32-byte entries where 24 were expected
// cannot overflow it, and the entries can be decoded both ways.
nvmlReturn_t ReadProcessList(const nvml::ProcessListCall& call, nvmlDevice_t handle, Bytes total,
                             std::vector<RawProcess>* out) {
  unsigned count = 0;
  nvmlReturn_t rc = call.fn(handle, &count, nullptr);
  std::vector<unsigned char> buffer;
  unsigned capacity = 0;
  // Processes can start between the two calls: grow and retry a few times.
  for (int attempt = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && attempt < 8; ++attempt) {
    capacity = count * 2 + 8;
    buffer.assign(capacity * sizeof(nvmlProcessInfo_r535_t), 0);
    count = capacity;
    rc = call.fn(handle, &count, buffer.data());
  }
  if (rc != NVML_SUCCESS) return rc;
  count = std::min(count, capacity);  // never trust a count beyond the buffer
  *out = Decode(buffer.data(), count, call.layout);
  // For `_v3` the 24-vs-32-byte layout is a guess from symbols (see
  // NvmlLibrary::Open); when the entries say it was wrong, take the other.
  if (call.layout_is_guess && LooksMisaligned(*out, total)) {
    const ProcessInfoLayout other =
        call.layout == ProcessInfoLayout::kV2 ? ProcessInfoLayout::kR535 : ProcessInfoLayout::kV2;
    std::vector<RawProcess> retry = Decode(buffer.data(), count, other);
    if (std::all_of(retry.begin(), retry.end(),
                    [&](const RawProcess& p) { return Plausible(p, total); })) {
      *out = std::move(retry);
    }
  }
  return NVML_SUCCESS;
}

Reading<PcieLevel> ToPcieLevel(nvmlReturn_t rc, int level) {
  bool unused = false;
  if (rc != NVML_SUCCESS) return Field<PcieLevel>(rc, {}, &unused);
  switch (level) {
    case NVML_TOPOLOGY_INTERNAL:
      return Reading<PcieLevel>::Of(PcieLevel::kSameBoard);
    case NVML_TOPOLOGY_SINGLE:
      return Reading<PcieLevel>::Of(PcieLevel::kSinglePcieSwitch);
    case NVML_TOPOLOGY_MULTIPLE:
      return Reading<PcieLevel>::Of(PcieLevel::kMultiplePcieSwitches);
    case NVML_TOPOLOGY_HOSTBRIDGE:
      return Reading<PcieLevel>::Of(PcieLevel::kHostBridge);
    case NVML_TOPOLOGY_NODE:
      return Reading<PcieLevel>::Of(PcieLevel::kSameNumaNode);
    case NVML_TOPOLOGY_SYSTEM:
      return Reading<PcieLevel>::Of(PcieLevel::kCrossSocket);
    default:
      return Reading<PcieLevel>::Fail(Unreadable::kError,
                                      "unknown topology level " + std::to_string(level));
  }
}

}  // namespace

core::Result<std::unique_ptr<NvmlBackend>> NvmlBackend::Create(const std::string& library) {
  GLEANER_ASSIGN_OR_RETURN(std::unique_ptr<nvml::NvmlLibrary> lib,
                           nvml::NvmlLibrary::Open(library));
  if (nvmlReturn_t rc = lib->init(); rc != NVML_SUCCESS) {
    return nvml::ToStatus(rc, "nvmlInit").WithContext("no usable NVIDIA driver");
  }
  std::unique_ptr<NvmlBackend> backend(new NvmlBackend(std::move(lib)));
  backend->ReadDriverInfo();
  GLEANER_RETURN_IF_ERROR(backend->Attach());
  backend->WatchXids();
  return backend;
}

NvmlBackend::~NvmlBackend() {
  if (xid_events_ != nullptr) lib_->event_set_free(xid_events_);
  lib_->shutdown();
}

// One event set for every attached GPU's critical Xids. A GPU that cannot
// register (consumer boards, some virtualised GPUs) says why in its readings.
void NvmlBackend::WatchXids() {
  const bool available = lib_->event_set_create && lib_->register_events && lib_->event_set_wait &&
                         lib_->event_set_free;
  nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
  if (available) rc = lib_->event_set_create(&xid_events_);
  if (rc != NVML_SUCCESS) xid_events_ = nullptr;
  for (Device& d : devices_) {
    if (!d.handle) continue;
    d.xid_error = xid_events_ == nullptr
                      ? rc
                      : lib_->register_events(d.handle, nvmlEventTypeXidCriticalError, xid_events_);
  }
}

// Takes every event waiting, without blocking; a pass reads at most a few
// hundred so that a flood of events cannot stall sampling.
void NvmlBackend::DrainXids() {
  if (xid_events_ == nullptr) return;
  for (int i = 0; i < 256; ++i) {
    nvmlEventData_t event{};
    const nvmlReturn_t rc = lib_->event_set_wait(xid_events_, &event, 0);
    if (rc == NVML_ERROR_TIMEOUT) return;
    // A failed wait (one GPU of the set lost, say) ends this pass's
    // draining; what was delivered before stays.
    if (rc != NVML_SUCCESS) return;
    if (event.eventType != nvmlEventTypeXidCriticalError) continue;
    for (Device& d : devices_) {
      if (d.handle != event.device) continue;
      d.last_xid = static_cast<uint32_t>(std::min<unsigned long long>(event.eventData, 0xffffffff));
      ++d.xid_count;
      if (!IsApplicationXid(d.last_xid)) d.fatal_xid = d.last_xid;
    }
  }
}

void NvmlBackend::ReadDriverInfo() {
  driver_.source = "nvml";
  driver_.driver_version = ReadString(lib_->driver_version, "nvmlSystemGetDriverVersion");
  driver_.nvml_version = ReadString(lib_->nvml_version, "nvmlSystemGetNVMLVersion");
  if (lib_->cuda_driver_version) {
    int version = 0;
    bool unused = false;
    const nvmlReturn_t rc = lib_->cuda_driver_version(&version);
    driver_.cuda_driver_version = Field(rc, version, &unused);
  } else {
    driver_.cuda_driver_version = Missing<int32_t>("nvmlSystemGetCudaDriverVersion");
  }
}

core::Status NvmlBackend::Attach() {
  unsigned count = 0;
  GLEANER_RETURN_IF_ERROR(nvml::ToStatus(lib_->device_count(&count), "nvmlDeviceGetCount"));
  for (unsigned i = 0; i < count; ++i) {
    Device d;
    GpuSnapshot& id = d.identity;
    id.index = i;
    bool lost = false;
    nvmlReturn_t rc = lib_->handle_by_index(i, &d.handle);
    if (rc == NVML_SUCCESS) {
      char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
      rc = lib_->uuid(d.handle, uuid, sizeof uuid);
      if (rc == NVML_SUCCESS) id.uuid = core::GpuUuid(FromBuffer(uuid));
    }
    if (rc != NVML_SUCCESS) {
      // A GPU we cannot attach still counts: it is listed, never lent.
      d.handle = nullptr;
      id.health = rc == NVML_ERROR_NO_PERMISSION ? GpuHealth::kNoPermission
                  : rc == NVML_ERROR_GPU_IS_LOST ? GpuHealth::kLost
                                                 : GpuHealth::kError;
      id.health_detail = std::string(nvml::ReturnCodeName(rc));
      id.name = id.pci_bus_id = Field<std::string>(rc, {}, &lost);
      FailAllReadings(id, nvml::ToUnreadable(rc), id.health_detail);
      devices_.push_back(std::move(d));
      continue;
    }
    if (lib_->name) {
      char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
      nvmlReturn_t name_rc = lib_->name(d.handle, name, sizeof name);
      id.name = Field<std::string>(name_rc, FromBuffer(name), &lost);
    } else {
      id.name = Missing<std::string>("nvmlDeviceGetName");
    }
    if (lib_->pci_info) {
      nvmlPciInfo_t pci{};
      nvmlReturn_t pci_rc = lib_->pci_info(d.handle, &pci);
      id.pci_bus_id = Field<std::string>(pci_rc, SysfsBusId(pci), &lost);
    } else {
      id.pci_bus_id = Missing<std::string>("nvmlDeviceGetPciInfo");
    }
    devices_.push_back(std::move(d));
  }
  return core::Status::Ok();
}

core::Result<std::vector<GpuSnapshot>> NvmlBackend::Snapshot() {
  DrainXids();
  std::vector<GpuSnapshot> out;
  out.reserve(devices_.size());
  for (const Device& d : devices_) out.push_back(Read(d));
  return out;
}

GpuSnapshot NvmlBackend::Read(const Device& d) const {
  GpuSnapshot s = d.identity;
  if (!d.handle) return s;  // never attached: its readings were failed at start
  nvmlDevice_t h = d.handle;
  bool lost = false;

  ReadMemory(h, &s, &lost);

  if (lib_->utilization) {
    nvmlUtilization_t u{};
    nvmlReturn_t rc = lib_->utilization(h, &u);
    s.utilization_gpu_pct = Field(rc, u.gpu, &lost);
    s.utilization_memory_pct = Field(rc, u.memory, &lost);
  } else {
    s.utilization_gpu_pct = s.utilization_memory_pct =
        Missing<uint32_t>("nvmlDeviceGetUtilizationRates");
  }

  s.temperature_c = ReadTemperature(h, &lost);

  s.power_draw_w = lib_->power_usage ? Watts(lib_->power_usage, h, &lost)
                                     : Missing<double>("nvmlDeviceGetPowerUsage");
  s.power_limit_w = lib_->power_limit ? Watts(lib_->power_limit, h, &lost)
                                      : Missing<double>("nvmlDeviceGetEnforcedPowerLimit");
  if (lib_->clock_info) {
    unsigned mhz = 0;
    const nvmlReturn_t rc = lib_->clock_info(h, NVML_CLOCK_SM, &mhz);
    s.sm_clock_mhz = Field(rc, mhz, &lost);
  } else {
    s.sm_clock_mhz = Missing<uint32_t>("nvmlDeviceGetClockInfo");
  }

  s.processes = ReadProcesses(h, s.memory_total.value_or(Bytes(~0ULL)), &lost);
  if (s.processes.has_value()) {
    std::vector<GpuProcess> processes = s.processes.value();
    ReadProcessUtilization(d, processes, &lost);
    s.processes = Reading<std::vector<GpuProcess>>::Of(std::move(processes));
  }
  s.errors = ReadErrors(d, &lost);
  if (lost) {
    s.health = GpuHealth::kLost;
    s.health_detail = "GPU_IS_LOST";
  }
  JudgeErrors(s);
  return s;
}

GpuErrors NvmlBackend::ReadErrors(const Device& d, bool* lost) const {
  GpuErrors e;
  nvmlDevice_t h = d.handle;
  if (lib_->total_ecc_errors) {
    for (auto [type, counter, out] :
         {std::tuple{NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC,
                     &e.ecc_corrected_volatile},
          std::tuple{NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
                     &e.ecc_uncorrected_volatile},
          std::tuple{NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC,
                     &e.ecc_corrected_aggregate},
          std::tuple{NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC,
                     &e.ecc_uncorrected_aggregate}}) {
      unsigned long long count = 0;
      const nvmlReturn_t rc = lib_->total_ecc_errors(h, type, counter, &count);
      *out = Field<uint64_t>(rc, count, lost);
    }
  } else {
    e.ecc_corrected_volatile = e.ecc_uncorrected_volatile = e.ecc_corrected_aggregate =
        e.ecc_uncorrected_aggregate = Missing<uint64_t>("nvmlDeviceGetTotalEccErrors");
  }
  if (lib_->pcie_replay_counter) {
    unsigned replays = 0;
    const nvmlReturn_t rc = lib_->pcie_replay_counter(h, &replays);
    e.pcie_replays = Field<uint32_t>(rc, replays, lost);
  } else {
    e.pcie_replays = Missing<uint32_t>("nvmlDeviceGetPcieReplayCounter");
  }
  if (lib_->retired_pages_pending) {
    int pending = NVML_FEATURE_DISABLED;
    const nvmlReturn_t rc = lib_->retired_pages_pending(h, &pending);
    e.retirement_pending = Field(rc, pending == NVML_FEATURE_ENABLED, lost);
  } else {
    e.retirement_pending = Missing<bool>("nvmlDeviceGetRetiredPagesPendingStatus");
  }
  if (lib_->remapped_rows) {
    unsigned corrected = 0, uncorrected = 0, pending = 0, failed = 0;
    const nvmlReturn_t rc = lib_->remapped_rows(h, &corrected, &uncorrected, &pending, &failed);
    e.remapped_rows_corrected = Field<uint32_t>(rc, corrected, lost);
    e.remapped_rows_uncorrected = Field<uint32_t>(rc, uncorrected, lost);
    e.remap_pending = Field(rc, pending != 0, lost);
    e.remap_failed = Field(rc, failed != 0, lost);
  } else {
    e.remapped_rows_corrected = e.remapped_rows_uncorrected =
        Missing<uint32_t>("nvmlDeviceGetRemappedRows");
    e.remap_pending = e.remap_failed = Missing<bool>("nvmlDeviceGetRemappedRows");
  }
  if (lib_->clock_event_reasons) {
    unsigned long long reasons = 0;
    const nvmlReturn_t rc = lib_->clock_event_reasons(h, &reasons);
    e.clock_event_reasons = Field<uint64_t>(rc, reasons, lost);
  } else {
    e.clock_event_reasons = Missing<uint64_t>("nvmlDeviceGetCurrentClocksEventReasons");
  }
  if (d.xid_error == NVML_ERROR_FUNCTION_NOT_FOUND) {
    e.last_xid = e.xid_count = e.fatal_xid = Missing<uint32_t>("nvmlEventSetCreate");
  } else {
    // The event set is shared: its failure says nothing of this GPU's loss.
    bool unused = false;
    e.last_xid = Field<uint32_t>(d.xid_error, d.last_xid, &unused);
    e.xid_count = Field<uint32_t>(d.xid_error, d.xid_count, &unused);
    e.fatal_xid = Field<uint32_t>(d.xid_error, d.fatal_xid, &unused);
  }
  return e;
}

// The newer call first; the older one where the driver lacks the newer or
// rejects its struct version.
void NvmlBackend::ReadMemory(nvmlDevice_t h, GpuSnapshot* s, bool* lost) const {
  nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
  unsigned long long total = 0, used = 0;
  if (lib_->memory_v2) {
    nvmlMemory_v2_t m{};
    m.version = nvmlMemory_v2;
    rc = lib_->memory_v2(h, &m);
    total = m.total;
    used = m.used;
  }
  if ((rc == NVML_ERROR_FUNCTION_NOT_FOUND || rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH) &&
      lib_->memory_v1) {
    nvmlMemory_t m{};
    rc = lib_->memory_v1(h, &m);
    total = m.total;
    used = m.used;
  }
  s->memory_total = Field(rc, Bytes(total), lost);
  s->memory_used = Field(rc, Bytes(used), lost);
}

Reading<int32_t> NvmlBackend::ReadTemperature(nvmlDevice_t h, bool* lost) const {
  nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
  int32_t celsius = 0;
  if (lib_->temperature_v) {
    nvmlTemperature_v1_t t{};
    t.version = nvmlTemperature_v1;
    t.sensorType = NVML_TEMPERATURE_GPU;
    rc = lib_->temperature_v(h, &t);
    celsius = t.temperature;
  }
  if ((rc == NVML_ERROR_FUNCTION_NOT_FOUND || rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH) &&
      lib_->temperature) {
    unsigned t = 0;
    rc = lib_->temperature(h, NVML_TEMPERATURE_GPU, &t);
    celsius = static_cast<int32_t>(t);
  }
  return Field(rc, celsius, lost);
}

Reading<std::vector<GpuProcess>> NvmlBackend::ReadProcesses(nvmlDevice_t handle, Bytes total,
                                                            bool* lost) const {
  if (!lib_->compute_processes.fn && !lib_->graphics_processes.fn) {
    return Missing<std::vector<GpuProcess>>("nvmlDeviceGetComputeRunningProcesses");
  }
  // A process with both a compute and a graphics context is one process.
  std::map<uint32_t, GpuProcess> by_pid;
  for (bool graphics : {false, true}) {
    const nvml::ProcessListCall& call =
        graphics ? lib_->graphics_processes : lib_->compute_processes;
    if (!call.fn) continue;
    std::vector<RawProcess> list;
    nvmlReturn_t rc = ReadProcessList(call, handle, total, &list);
    if (rc == NVML_ERROR_NOT_SUPPORTED && graphics) continue;  // compute-only boards
    if (rc != NVML_SUCCESS) return Field<std::vector<GpuProcess>>(rc, {}, lost);
    for (const RawProcess& raw : list) {
      GpuProcess& p = by_pid[raw.pid];
      p.pid = raw.pid;
      if (!p.used_memory.has_value()) {
        p.used_memory =
            raw.used == NVML_VALUE_NOT_AVAILABLE
                ? Reading<Bytes>::Fail(Unreadable::kNotSupported, "NVML_VALUE_NOT_AVAILABLE")
                : Reading<Bytes>::Of(Bytes(raw.used));
      }
      (graphics ? p.graphics : p.compute) = true;
    }
  }
  std::vector<GpuProcess> out;
  for (auto& [pid, p] : by_pid) out.push_back(std::move(p));
  return Reading<std::vector<GpuProcess>>::Of(std::move(out));
}

// The driver keeps a sample per process that computed in each stretch of
// its sampling: the highest since the last pass is the process's figure,
// and a process without one did nothing. Drivers repeat stale samples and
// report impossible ones, so only newer samples of listed processes, at
// most 100 %, count.
void NvmlBackend::ReadProcessUtilization(const Device& d, std::vector<GpuProcess>& processes,
                                         bool* lost) const {
  const auto fail_all = [&](const Reading<uint32_t>& why) {
    for (GpuProcess& p : processes) p.sm_utilization_pct = why;
  };
  if (!lib_->process_utilization) {
    fail_all(Missing<uint32_t>("nvmlDeviceGetProcessUtilization"));
    return;
  }
  if (processes.empty()) return;
  std::vector<nvmlProcessUtilizationSample_t> samples;
  unsigned count = 0;
  nvmlReturn_t rc = lib_->process_utilization(d.handle, nullptr, &count, d.utilization_seen_us);
  // Processes can start between the two calls: room for a few more.
  for (int attempt = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && attempt < 3; ++attempt) {
    samples.assign(count + 16, nvmlProcessUtilizationSample_t{});
    count = static_cast<unsigned>(samples.size());
    rc = lib_->process_utilization(d.handle, samples.data(), &count, d.utilization_seen_us);
    samples.resize(std::min<size_t>(count, samples.size()));
  }
  if (rc == NVML_ERROR_NOT_FOUND) {
    samples.clear();  // nothing computed since the last pass
  } else if (rc != NVML_SUCCESS) {
    fail_all(Field<uint32_t>(rc, 0, lost));
    return;
  }
  std::map<uint32_t, uint32_t> highest;
  unsigned long long newest = d.utilization_seen_us;
  for (const nvmlProcessUtilizationSample_t& u : samples) {
    if (u.timeStamp <= d.utilization_seen_us || u.smUtil > 100) continue;
    highest[u.pid] = std::max(highest[u.pid], u.smUtil);
    newest = std::max(newest, u.timeStamp);
  }
  d.utilization_seen_us = newest;
  for (GpuProcess& p : processes) {
    auto h = highest.find(p.pid);
    p.sm_utilization_pct = Reading<uint32_t>::Of(h == highest.end() ? 0 : h->second);
  }
}

core::Result<std::vector<GpuLink>> NvmlBackend::Topology() {
  std::vector<GpuLink> links;
  for (size_t i = 0; i < devices_.size(); ++i) {
    for (size_t j = i + 1; j < devices_.size(); ++j) {
      const Device& a = devices_[i];
      const Device& b = devices_[j];
      if (!a.handle || !b.handle) continue;
      GpuLink link{a.identity.uuid, b.identity.uuid, {}, {}};
      if (lib_->common_ancestor) {
        int level = 0;
        const nvmlReturn_t rc = lib_->common_ancestor(a.handle, b.handle, &level);
        link.pcie = ToPcieLevel(rc, level);
      } else {
        link.pcie = Missing<PcieLevel>("nvmlDeviceGetTopologyCommonAncestor");
      }
      if (lib_->p2p_status) {
        int status = 0;
        nvmlReturn_t rc = lib_->p2p_status(a.handle, b.handle, NVML_P2P_CAPS_INDEX_NVLINK, &status);
        bool unused = false;
        link.nvlink = Field(rc, status == NVML_P2P_STATUS_OK, &unused);
      } else {
        link.nvlink = Missing<bool>("nvmlDeviceGetP2PStatus");
      }
      links.push_back(std::move(link));
    }
  }
  return links;
}

}  // namespace gleaner::gpu
