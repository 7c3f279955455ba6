#include "gpu/nvml/nvml_library.h"

#include <dlfcn.h>

#include <initializer_list>

namespace gleaner::gpu::nvml {
namespace {

// dlsym returns void*; POSIX guarantees it converts to a function pointer.
template <typename Fn>
Fn As(void* symbol) {
  return reinterpret_cast<Fn>(symbol);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

}  // namespace

size_t EntrySize(ProcessInfoLayout layout) {
  switch (layout) {
    case ProcessInfoLayout::kV1:
      return sizeof(nvmlProcessInfo_v1_t);
    case ProcessInfoLayout::kV2:
      return sizeof(nvmlProcessInfo_v2_t);
    case ProcessInfoLayout::kR535:
      return sizeof(nvmlProcessInfo_r535_t);
  }
  return sizeof(nvmlProcessInfo_r535_t);
}

core::Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Open(const std::string& path) {
  dlerror();
  // RTLD_LOCAL: NVML's symbols must not leak into the global namespace where
  // a CUDA application in the same process could bind to them.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return core::Unavailable("no NVIDIA driver found: cannot load " + path + " (" +
                             (why ? why : "unknown dlopen error") +
                             "). Install the NVIDIA driver, or pass --fake demo to try gleaner on "
                             "simulated GPUs");
  }
  std::unique_ptr<NvmlLibrary> lib(new NvmlLibrary(handle));
  lib->init = As<InitFn>(lib->Resolve({"nvmlInit_v2", "nvmlInit"}));
  lib->shutdown = As<InitFn>(lib->Resolve({"nvmlShutdown"}));
  lib->device_count = As<CountFn>(lib->Resolve({"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}));
  lib->handle_by_index = As<HandleByIndexFn>(
      lib->Resolve({"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}));
  lib->uuid = As<DeviceStringFn>(lib->Resolve({"nvmlDeviceGetUUID"}));
  if (!lib->init || !lib->shutdown || !lib->device_count || !lib->handle_by_index || !lib->uuid) {
    return core::Unavailable(path +
                             " lacks the basic NVML entry points (nvmlInit, nvmlDeviceGetCount, "
                             "nvmlDeviceGetHandleByIndex, nvmlDeviceGetUUID); is it really "
                             "NVIDIA's libnvidia-ml?");
  }
  lib->driver_version = As<StringFn>(lib->Resolve({"nvmlSystemGetDriverVersion"}));
  lib->nvml_version = As<StringFn>(lib->Resolve({"nvmlSystemGetNVMLVersion"}));
  lib->cuda_driver_version = As<IntOutFn>(
      lib->Resolve({"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"}));
  lib->name = As<DeviceStringFn>(lib->Resolve({"nvmlDeviceGetName"}));
  lib->pci_info =
      As<PciInfoFn>(lib->Resolve({"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"}));
  lib->memory_v2 = As<MemoryV2Fn>(lib->Resolve({"nvmlDeviceGetMemoryInfo_v2"}));
  lib->memory_v1 = As<MemoryV1Fn>(lib->Resolve({"nvmlDeviceGetMemoryInfo"}));
  lib->utilization = As<UtilizationFn>(lib->Resolve({"nvmlDeviceGetUtilizationRates"}));
  lib->temperature_v = As<TemperatureVFn>(lib->Resolve({"nvmlDeviceGetTemperatureV"}));
  lib->temperature = As<TemperatureFn>(lib->Resolve({"nvmlDeviceGetTemperature"}));
  lib->power_usage = As<DeviceUintFn>(lib->Resolve({"nvmlDeviceGetPowerUsage"}));
  lib->power_limit = As<DeviceUintFn>(
      lib->Resolve({"nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit"}));
  lib->clock_info = As<ClockInfoFn>(lib->Resolve({"nvmlDeviceGetClockInfo"}));
  lib->common_ancestor =
      As<CommonAncestorFn>(lib->Resolve({"nvmlDeviceGetTopologyCommonAncestor"}));
  lib->p2p_status = As<P2PStatusFn>(lib->Resolve({"nvmlDeviceGetP2PStatus"}));
  lib->process_utilization =
      As<ProcessUtilizationFn>(lib->Resolve({"nvmlDeviceGetProcessUtilization"}));
  lib->total_ecc_errors = As<EccCountFn>(lib->Resolve({"nvmlDeviceGetTotalEccErrors"}));
  lib->pcie_replay_counter = As<DeviceUintFn>(lib->Resolve({"nvmlDeviceGetPcieReplayCounter"}));
  lib->retired_pages_pending =
      As<EnableStateFn>(lib->Resolve({"nvmlDeviceGetRetiredPagesPendingStatus"}));
  lib->remapped_rows = As<RemappedRowsFn>(lib->Resolve({"nvmlDeviceGetRemappedRows"}));
  // Renamed in CUDA 12.2's NVML; the old name stays exported.
  lib->clock_event_reasons = As<DeviceU64Fn>(lib->Resolve(
      {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"}));
  lib->event_set_create = As<EventSetCreateFn>(lib->Resolve({"nvmlEventSetCreate"}));
  lib->register_events = As<RegisterEventsFn>(lib->Resolve({"nvmlDeviceRegisterEvents"}));
  lib->event_set_wait =
      As<EventSetWaitFn>(lib->Resolve({"nvmlEventSetWait_v2", "nvmlEventSetWait"}));
  lib->event_set_free = As<EventSetFreeFn>(lib->Resolve({"nvmlEventSetFree"}));

  // Drivers 535.43-535.86 made `_v3` write 32-byte entries; 535.98 rolled it
  // back and 535.104 re-added `_v3` at 24 bytes together with
  // nvmlDeviceGetRunningProcessDetailList. So: 32 bytes only where `_v3` and
  // the confidential-computing call exist but the detail-list call does not.
  const bool r535_layout = lib->Has("nvmlDeviceGetConfComputeMemSizeInfo") &&
                           !lib->Has("nvmlDeviceGetRunningProcessDetailList");
  for (auto [call, family] :
       {std::pair{&lib->compute_processes, "nvmlDeviceGetComputeRunningProcesses"},
        std::pair{&lib->graphics_processes, "nvmlDeviceGetGraphicsRunningProcesses"}}) {
    const std::string base(family);
    if (void* v3 = lib->Resolve({(base + "_v3").c_str()})) {
      *call = {As<ProcessesFn>(v3), r535_layout ? ProcessInfoLayout::kR535 : ProcessInfoLayout::kV2,
               true};
    } else if (void* v2 = lib->Resolve({(base + "_v2").c_str()})) {
      *call = {As<ProcessesFn>(v2), ProcessInfoLayout::kV2, false};
    } else if (void* v1 = lib->Resolve({base.c_str()})) {
      *call = {As<ProcessesFn>(v1), ProcessInfoLayout::kV1, false};
    }
  }
  return lib;
}

NvmlLibrary::~NvmlLibrary() { dlclose(handle_); }

void* NvmlLibrary::Resolve(std::initializer_list<const char*> names) {
  for (const char* symbol_name : names) {
    if (void* symbol = dlsym(handle_, symbol_name)) {
      resolved_.emplace_back(symbol_name);
      return symbol;
    }
  }
  return nullptr;
}

bool NvmlLibrary::Has(const char* symbol_name) const {
  return dlsym(handle_, symbol_name) != nullptr;
}

}  // namespace gleaner::gpu::nvml
