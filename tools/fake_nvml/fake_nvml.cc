// A fake libnvidia-ml.so.1 that plays a gleaner scenario (docs/scenarios.md).
// Tests load it through the real NVML loader, so every line of the NVML
// backend runs on machines without a GPU.
//
// Built in several variants (FAKE_NVML_API) that export what real drivers of
// each era export, so the loader's fallbacks meet real missing symbols:
//   1    pre-450: plain symbols only, 16-byte process entries
//   2    450-510: adds the _v2 symbols, 24-byte process entries
//   3    535.104 and later: adds _v3 (24 bytes), memory _v2, the detail list
//   535  535.43-535.86: _v3 writes 32-byte entries, no detail list
//   5350 a driver that writes 32-byte _v3 entries yet exports the detail
//        list, so symbol-based detection guesses wrong (tests the
//        loader's plausibility check)
//
// Environment:
//   GLEANER_FAKE_NVML_SCENARIO  built-in scenario name or file (default: demo)
//   GLEANER_FAKE_NVML_TIME_S    freeze scenario time at this many seconds
//   GLEANER_FAKE_CUDA_STATE     the fake libcuda.so.1's process states: a
//                               checkpointed process is off the GPU
// Tests may also call gleanerFakeNvmlSetTime(seconds) through dlsym.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gpu/cuda/checkpoint_api.h"
#include "gpu/cuda/fake_cuda_state.h"
#include "gpu/nvml/nvml_api.h"
#include "gpu/nvml/nvml_errors.h"
#include "gpu/scenario.h"

#ifndef FAKE_NVML_API
#error "FAKE_NVML_API must be 1, 2, 3, 535 or 5350"
#endif
#define FAKE_NVML_HAS_V2 (FAKE_NVML_API >= 2)
#define FAKE_NVML_HAS_V3 (FAKE_NVML_API >= 3)
#define FAKE_NVML_R535 (FAKE_NVML_API == 535 || FAKE_NVML_API == 5350)
#define FAKE_NVML_HAS_DETAIL_LIST (FAKE_NVML_API == 3 || FAKE_NVML_API == 5350)

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using gleaner::gpu::Scenario;
using gleaner::gpu::ScenarioError;
using gleaner::gpu::ScenarioField;
using gleaner::gpu::ScenarioGpuState;

// The handle NVML gives out: a pointer to one of these, stable until the
// library is unloaded.
struct FakeDevice {
  unsigned index;
};

// An event set: which GPUs registered for Xid events, and how many of each
// GPU's scenario Xids it has delivered or skipped. As with the real driver,
// an Xid raised before the GPU registered is never delivered: registering
// skips those of the frames before the current one (the current frame's Xid
// is raised "now", so a daemon starting at 0 hears a frame-0 Xid).
struct FakeEventSet {
  bool in_use = false;
  bool registered[64] = {};
  uint32_t delivered[64] = {};
};

struct State {
  std::mutex mu;
  int init_count = 0;
  std::optional<Scenario> scenario;
  FakeDevice devices[64];
  FakeEventSet event_sets[8];
  std::chrono::steady_clock::time_point start;
  std::optional<double> frozen_time_s;
};

State& S() {
  static State state;
  return state;
}

// The processes the fake libcuda.so.1 checkpointed: their memory is in
// host memory, and the GPU no longer lists them.
bool Parked(uint32_t pid) {
  const char* path = std::getenv("GLEANER_FAKE_CUDA_STATE");
  if (path == nullptr) return false;
  const auto states = gleaner::gpu::FakeCudaStates(path);
  const auto it = states.find(pid);
  return it != states.end() && it->second == CU_PROCESS_STATE_CHECKPOINTED;
}

nvmlReturn_t ToReturn(ScenarioError e) { return gleaner::gpu::nvml::ToNvmlReturn(e); }

double NowSeconds(State& s) {
  if (s.frozen_time_s) return *s.frozen_time_s;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - s.start).count();
}

nvmlReturn_t DoInit() {
  State& s = S();
  std::lock_guard lock(s.mu);
  // A fresh start (first init, or init after the last shutdown) reads the
  // scenario again, so one process can load several scenarios in turn.
  if (s.init_count == 0) {
    s.scenario.reset();
    const char* name = std::getenv("GLEANER_FAKE_NVML_SCENARIO");
    auto loaded = gleaner::gpu::LoadScenario(name && *name ? name : "demo");
    if (!loaded.ok()) {
      std::fprintf(stderr, "fake libnvidia-ml: %s\n", loaded.status().message().c_str());
      return NVML_ERROR_UNKNOWN;
    }
    if (loaded->gpus.size() > std::size(s.devices)) {
      std::fprintf(stderr, "fake libnvidia-ml: at most 64 GPUs\n");
      return NVML_ERROR_UNKNOWN;
    }
    s.scenario = std::move(*loaded);
    for (unsigned i = 0; i < std::size(s.devices); ++i) s.devices[i].index = i;
    s.start = std::chrono::steady_clock::now();
    s.frozen_time_s.reset();
    if (const char* t = std::getenv("GLEANER_FAKE_NVML_TIME_S"); t && *t) {
      s.frozen_time_s = std::strtod(t, nullptr);
    }
  }
  if (auto e = s.scenario->driver.init_error) return ToReturn(*e);
  ++s.init_count;
  return NVML_SUCCESS;
}

// Runs `body(state_of_gpu)` under the lock after the checks every device
// call makes; `field` selects which scenario faults apply (none for calls,
// like the UUID, that only fail when the GPU is lost).
template <typename Body>
nvmlReturn_t WithDevice(nvmlDevice_t device, std::optional<ScenarioField> field, Body body) {
  State& s = S();
  std::lock_guard lock(s.mu);
  if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned index = reinterpret_cast<FakeDevice*>(device)->index;
  if (index >= s.scenario->gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
  ScenarioGpuState state = gleaner::gpu::GpuStateAt(*s.scenario, index, NowSeconds(s));
  if (state.lost()) return NVML_ERROR_GPU_IS_LOST;
  if (field) {
    if (auto e = state.ErrorFor(*field)) return ToReturn(*e);
  }
  return body(state);
}

nvmlReturn_t CopyString(const std::string& value, char* out, unsigned length) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (value.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, value.c_str(), value.size() + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t HandleByIndex(unsigned index, nvmlDevice_t* device) {
  State& s = S();
  std::lock_guard lock(s.mu);
  if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr || index >= s.scenario->gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
  const auto& gpu = s.scenario->gpus[index];
  if (gpu.no_permission) return NVML_ERROR_NO_PERMISSION;
  if (gleaner::gpu::GpuStateAt(*s.scenario, index, NowSeconds(s)).lost()) {
    return NVML_ERROR_GPU_IS_LOST;
  }
  *device = reinterpret_cast<nvmlDevice_t>(&s.devices[index]);
  return NVML_SUCCESS;
}

nvmlReturn_t Count(unsigned* count) {
  State& s = S();
  std::lock_guard lock(s.mu);
  if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned>(s.scenario->gpus.size());
  return NVML_SUCCESS;
}

nvmlReturn_t Memory(nvmlDevice_t device, unsigned long long* total, unsigned long long* used) {
  return WithDevice(device, ScenarioField::kMemory, [&](const ScenarioGpuState& st) {
    *total = st.gpu().memory_total.count();
    *used = st.frame().memory_used.count();
    for (const auto& p : st.frame().processes) {
      if (Parked(p.pid)) *used -= std::min<unsigned long long>(*used, p.used_memory.count());
    }
    return NVML_SUCCESS;
  });
}

// Fills a process list with entries of type Entry, NVML's way: a short
// buffer gets INSUFFICIENT_SIZE and the count it needs.
template <typename Entry>
nvmlReturn_t Processes(nvmlDevice_t device, unsigned* count, void* out, bool graphics) {
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(device, ScenarioField::kProcesses, [&](const ScenarioGpuState& st) {
    unsigned needed = 0;
    for (const auto& p : st.frame().processes)
      needed += (graphics ? p.graphics : p.compute) && !Parked(p.pid) ? 1 : 0;
    if (*count < needed || (needed > 0 && out == nullptr)) {
      *count = needed;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    auto* entries = static_cast<Entry*>(out);
    unsigned i = 0;
    for (const auto& p : st.frame().processes) {
      if (!(graphics ? p.graphics : p.compute) || Parked(p.pid)) continue;
      Entry e{};
      e.pid = p.pid;
      e.usedGpuMemory = p.used_memory.count();
      if constexpr (sizeof(Entry) >= sizeof(nvmlProcessInfo_v2_t)) {
        e.gpuInstanceId = e.computeInstanceId = 0xFFFFFFFFu;  // not MIG
      }
      entries[i++] = e;
    }
    *count = needed;
    return NVML_SUCCESS;
  });
}

// Per-process utilization as a driver keeps it: one sample per process that
// computed, stamped with the (real) time of the call, so every pass finds
// newer samples than the last even while scenario time stands still.
nvmlReturn_t ProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t* out,
                                unsigned* count, unsigned long long last_seen_us) {
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(device, ScenarioField::kProcesses, [&](const ScenarioGpuState& st) {
    const auto now_us =
        static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::microseconds>(
                                            std::chrono::steady_clock::now() - S().start)
                                            .count() +
                                        1);
    unsigned needed = 0;
    for (const auto& p : st.frame().processes) {
      needed += gleaner::gpu::ProcessUtilization(p, st.frame()) > 0 && !Parked(p.pid) ? 1 : 0;
    }
    if (needed == 0 || now_us <= last_seen_us) return NVML_ERROR_NOT_FOUND;
    if (out == nullptr || *count < needed) {
      *count = needed;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    unsigned i = 0;
    for (const auto& p : st.frame().processes) {
      const uint32_t util = gleaner::gpu::ProcessUtilization(p, st.frame());
      if (util == 0 || Parked(p.pid)) continue;
      out[i++] = {p.pid, now_us, util, 0, 0, 0};
    }
    *count = needed;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t PciInfo(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(device, ScenarioField::kPciBusId, [&](const ScenarioGpuState& st) {
    unsigned domain = 0, bus = 0, dev = 0;
    std::sscanf(st.gpu().pci_bus_id.c_str(), "%x:%x:%x", &domain, &bus, &dev);
    *pci = nvmlPciInfo_t{};
    pci->domain = domain;
    pci->bus = bus;
    pci->device = dev;
    pci->pciDeviceId = 0x233010DE;
    std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", domain, bus, dev);
    std::snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", domain, bus, dev);
    return NVML_SUCCESS;
  });
}

unsigned DeviceIndex(nvmlDevice_t device) { return reinterpret_cast<FakeDevice*>(device)->index; }

// Pairwise calls fail when either GPU is lost. Called with the lock held.
bool PeerLost(nvmlDevice_t peer) {
  State& s = S();
  return DeviceIndex(peer) < s.scenario->gpus.size() &&
         gleaner::gpu::GpuStateAt(*s.scenario, DeviceIndex(peer), NowSeconds(s)).lost();
}

}  // namespace

// ---- test hook --------------------------------------------------------------

EXPORT void gleanerFakeNvmlSetTime(double seconds) {
  std::lock_guard lock(S().mu);
  S().frozen_time_s = seconds;
}

// ---- init and system --------------------------------------------------------

EXPORT nvmlReturn_t nvmlInit() { return DoInit(); }
#if FAKE_NVML_HAS_V2
EXPORT nvmlReturn_t nvmlInit_v2() { return DoInit(); }
#endif

EXPORT nvmlReturn_t nvmlShutdown() {
  std::lock_guard lock(S().mu);
  if (S().init_count == 0) return NVML_ERROR_UNINITIALIZED;
  --S().init_count;
  return NVML_SUCCESS;
}

EXPORT const char* nvmlErrorString(nvmlReturn_t rc) {
  switch (rc) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned length) {
  std::lock_guard lock(S().mu);
  if (S().init_count == 0) return NVML_ERROR_UNINITIALIZED;
  return CopyString(S().scenario->driver.version, version, length);
}

EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned length) {
  std::lock_guard lock(S().mu);
  if (S().init_count == 0) return NVML_ERROR_UNINITIALIZED;
  return CopyString(S().scenario->driver.nvml_version, version, length);
}

EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  std::lock_guard lock(S().mu);
  if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (S().init_count == 0) return NVML_ERROR_UNINITIALIZED;
  *version = S().scenario->driver.cuda_version;
  return NVML_SUCCESS;
}
#if FAKE_NVML_HAS_V2
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
  return nvmlSystemGetCudaDriverVersion(version);
}
#endif

// ---- enumeration and identity ----------------------------------------------

EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned* count) { return Count(count); }
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned i, nvmlDevice_t* d) {
  return HandleByIndex(i, d);
}
#if FAKE_NVML_HAS_V2
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) { return Count(count); }
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
  return HandleByIndex(i, d);
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned length) {
  return WithDevice(device, std::nullopt, [&](const ScenarioGpuState& st) {
    return CopyString(st.gpu().uuid, uuid, length);
  });
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length) {
  return WithDevice(device, ScenarioField::kName, [&](const ScenarioGpuState& st) {
    return CopyString(st.gpu().name, name, length);
  });
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return PciInfo(device, pci);
}
#if FAKE_NVML_HAS_V2
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return PciInfo(device, pci);
}
#endif

// ---- readings ---------------------------------------------------------------

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  nvmlReturn_t rc = Memory(device, &memory->total, &memory->used);
  if (rc == NVML_SUCCESS) memory->free = memory->total - memory->used;
  return rc;
}
#if FAKE_NVML_HAS_V3
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  nvmlReturn_t rc = Memory(device, &memory->total, &memory->used);
  if (rc == NVML_SUCCESS) {
    memory->reserved = 0;
    memory->free = memory->total - memory->used;
  }
  return rc;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* u) {
  if (u == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(device, ScenarioField::kUtilization, [&](const ScenarioGpuState& st) {
    u->gpu = st.frame().utilization_gpu_pct;
    u->memory = st.frame().utilization_memory_pct;
    return NVML_SUCCESS;
  });
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned* temp) {
  if (temp == nullptr || sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(device, ScenarioField::kTemperature, [&](const ScenarioGpuState& st) {
    *temp = static_cast<unsigned>(st.frame().temperature_c);
    return NVML_SUCCESS;
  });
}
#if FAKE_NVML_HAS_V3 && !FAKE_NVML_R535
EXPORT nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_v1_t* t) {
  if (t == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (t->version != nvmlTemperature_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (t->sensorType != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(device, ScenarioField::kTemperature, [&](const ScenarioGpuState& st) {
    t->temperature = st.frame().temperature_c;
    return NVML_SUCCESS;
  });
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned* milliwatts) {
  if (milliwatts == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(device, ScenarioField::kPower, [&](const ScenarioGpuState& st) {
    *milliwatts = static_cast<unsigned>(std::lround(st.frame().power_draw_w * 1000));
    return NVML_SUCCESS;
  });
}

EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned* milliwatts) {
  if (milliwatts == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(device, ScenarioField::kPowerLimit, [&](const ScenarioGpuState& st) {
    *milliwatts = static_cast<unsigned>(std::lround(st.gpu().power_limit_w * 1000));
    return NVML_SUCCESS;
  });
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned* mhz) {
  if (mhz == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (type != NVML_CLOCK_SM) return NVML_ERROR_NOT_SUPPORTED;
  return WithDevice(device, ScenarioField::kSmClock, [&](const ScenarioGpuState& st) {
    *mhz = st.frame().sm_clock_mhz;
    return NVML_SUCCESS;
  });
}

// ---- processes --------------------------------------------------------------

EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d,
                                                    nvmlProcessUtilizationSample_t* out,
                                                    unsigned* n, unsigned long long last_seen_us) {
  return ProcessUtilization(d, out, n, last_seen_us);
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned* n, void* out) {
  return Processes<nvmlProcessInfo_v1_t>(d, n, out, false);
}
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned* n, void* out) {
  return Processes<nvmlProcessInfo_v1_t>(d, n, out, true);
}
#if FAKE_NVML_HAS_V2
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned* n,
                                                            void* out) {
  return Processes<nvmlProcessInfo_v2_t>(d, n, out, false);
}
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned* n,
                                                             void* out) {
  return Processes<nvmlProcessInfo_v2_t>(d, n, out, true);
}
#endif
#if FAKE_NVML_HAS_V3
#if FAKE_NVML_R535
using V3Entry = nvmlProcessInfo_r535_t;
#else
using V3Entry = nvmlProcessInfo_v2_t;
#endif
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned* n,
                                                            void* out) {
  return Processes<V3Entry>(d, n, out, false);
}
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned* n,
                                                             void* out) {
  return Processes<V3Entry>(d, n, out, true);
}
// Present from 535 on; gleaner only checks that it exists (layout detection).
EXPORT nvmlReturn_t nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t, void*) {
  return NVML_ERROR_NOT_SUPPORTED;
}
#endif
#if FAKE_NVML_HAS_DETAIL_LIST
EXPORT nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t, void*) {
  return NVML_ERROR_NOT_SUPPORTED;
}
#endif

// ---- topology ---------------------------------------------------------------

EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
                                                        int* level) {
  if (level == nullptr || b == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(a, std::nullopt, [&](const ScenarioGpuState&) {
    if (PeerLost(b)) return NVML_ERROR_GPU_IS_LOST;
    using gleaner::gpu::PcieLevel;
    switch (gleaner::gpu::PcieLevelBetween(*S().scenario, DeviceIndex(a), DeviceIndex(b))) {
      case PcieLevel::kSameBoard:
        *level = NVML_TOPOLOGY_INTERNAL;
        break;
      case PcieLevel::kSinglePcieSwitch:
        *level = NVML_TOPOLOGY_SINGLE;
        break;
      case PcieLevel::kMultiplePcieSwitches:
        *level = NVML_TOPOLOGY_MULTIPLE;
        break;
      case PcieLevel::kHostBridge:
        *level = NVML_TOPOLOGY_HOSTBRIDGE;
        break;
      case PcieLevel::kSameNumaNode:
        *level = NVML_TOPOLOGY_NODE;
        break;
      case PcieLevel::kCrossSocket:
        *level = NVML_TOPOLOGY_SYSTEM;
        break;
    }
    return NVML_SUCCESS;
  });
}

EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, int index, int* status) {
  if (status == nullptr || b == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(a, std::nullopt, [&](const ScenarioGpuState&) {
    if (PeerLost(b)) return NVML_ERROR_GPU_IS_LOST;
    const bool linked = gleaner::gpu::NvlinkBetween(*S().scenario, DeviceIndex(a), DeviceIndex(b));
    *status = index == NVML_P2P_CAPS_INDEX_NVLINK && !linked ? NVML_P2P_STATUS_NOT_SUPPORTED
                                                             : NVML_P2P_STATUS_OK;
    return NVML_SUCCESS;
  });
}

// ---- errors and health ----------------------------------------------------

EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int type, int counter,
                                                unsigned long long* count) {
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(device, ScenarioField::kEcc, [&](const ScenarioGpuState& st) {
    const auto& e = st.frame().errors;
    const bool corrected = type == NVML_MEMORY_ERROR_TYPE_CORRECTED;
    if (!corrected && type != NVML_MEMORY_ERROR_TYPE_UNCORRECTED) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (counter == NVML_VOLATILE_ECC) {
      *count = corrected ? e.ecc_corrected_volatile : e.ecc_uncorrected_volatile;
    } else if (counter == NVML_AGGREGATE_ECC) {
      *count = corrected ? e.ecc_corrected_aggregate : e.ecc_uncorrected_aggregate;
    } else {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    return NVML_SUCCESS;
  });
}

EXPORT nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned* value) {
  if (value == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(device, ScenarioField::kPcieReplays, [&](const ScenarioGpuState& st) {
    *value = st.frame().errors.pcie_replays;
    return NVML_SUCCESS;
  });
}

EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, int* pending) {
  if (pending == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(device, ScenarioField::kRetiredPages, [&](const ScenarioGpuState& st) {
    *pending = st.frame().errors.retirement_pending ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
  });
}

namespace {
nvmlReturn_t ClockEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  if (reasons == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(device, ScenarioField::kClockEvents, [&](const ScenarioGpuState& st) {
    *reasons = st.frame().errors.clock_event_reasons;
    return NVML_SUCCESS;
  });
}
}  // namespace
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                              unsigned long long* reasons) {
  return ClockEventReasons(device, reasons);
}
#if FAKE_NVML_HAS_V3
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                           unsigned long long* reasons) {
  return ClockEventReasons(device, reasons);
}
#endif

// Drivers before 450 lack it; every variant exports it so that the
// variants agree with the in-process fake on every reading.
EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned* corrected,
                                              unsigned* uncorrected, unsigned* pending,
                                              unsigned* failed) {
  if (!corrected || !uncorrected || !pending || !failed) return NVML_ERROR_INVALID_ARGUMENT;
  return WithDevice(device, ScenarioField::kRemappedRows, [&](const ScenarioGpuState& st) {
    const auto& e = st.frame().errors;
    *corrected = e.remapped_rows_corrected;
    *uncorrected = e.remapped_rows_uncorrected;
    *pending = e.remap_pending ? 1 : 0;
    *failed = e.remap_failed ? 1 : 0;
    return NVML_SUCCESS;
  });
}

// ---- events ------------------------------------------------------------------

namespace {
FakeEventSet* ToSet(nvmlEventSet_t set) { return reinterpret_cast<FakeEventSet*>(set); }
}  // namespace

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  State& s = S();
  std::lock_guard lock(s.mu);
  if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  for (FakeEventSet& e : s.event_sets) {
    if (e.in_use) continue;
    e = FakeEventSet{};
    e.in_use = true;
    *set = reinterpret_cast<nvmlEventSet_t>(&e);
    return NVML_SUCCESS;
  }
  return NVML_ERROR_MEMORY;
}

EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  State& s = S();
  std::lock_guard lock(s.mu);
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  ToSet(set)->in_use = false;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types,
                                             nvmlEventSet_t set) {
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (types & ~nvmlEventTypeXidCriticalError) return NVML_ERROR_NOT_SUPPORTED;
  return WithDevice(device, ScenarioField::kXidEvents, [&](const ScenarioGpuState& st) {
    const unsigned i = DeviceIndex(device);
    ToSet(set)->registered[i] = true;
    ToSet(set)->delivered[i] = st.XidsSoFar().count - (st.frame().xid != 0 ? 1 : 0);
    return NVML_SUCCESS;
  });
}

namespace {
// The next Xid not yet delivered, at once (a timeout is never waited out:
// the scenario's clock, not this call, makes events happen).
nvmlReturn_t EventSetWait(nvmlEventSet_t set, nvmlEventData_t* data, size_t data_size) {
  State& s = S();
  std::lock_guard lock(s.mu);
  if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (set == nullptr || data == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  FakeEventSet& e = *ToSet(set);
  for (unsigned i = 0; i < s.scenario->gpus.size(); ++i) {
    if (!e.registered[i]) continue;
    ScenarioGpuState st = gleaner::gpu::GpuStateAt(*s.scenario, i, NowSeconds(s));
    if (st.lost()) continue;
    if (auto error = st.ErrorFor(ScenarioField::kXidEvents)) return ToReturn(*error);
    if (e.delivered[i] >= st.XidsSoFar().count) continue;
    // The next one: the (delivered + 1)th frame with an Xid.
    const auto* f = st.gpu().timeline.data();
    for (uint32_t seen = 0;; ++f) {
      if (f->xid != 0 && seen++ == e.delivered[i]) break;
    }
    ++e.delivered[i];
    nvmlEventData_t event{};
    event.device = reinterpret_cast<nvmlDevice_t>(&s.devices[i]);
    event.eventType = nvmlEventTypeXidCriticalError;
    event.eventData = f->xid;
    std::memcpy(data, &event, data_size);
    return NVML_SUCCESS;
  }
  return NVML_ERROR_TIMEOUT;
}
}  // namespace

// Before MIG the event had no instance ids: 24 bytes.
EXPORT nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t* data, unsigned) {
  return EventSetWait(set, data, offsetof(nvmlEventData_t, gpuInstanceId));
}
#if FAKE_NVML_HAS_V2
EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned) {
  return EventSetWait(set, data, sizeof(nvmlEventData_t));
}
#endif
