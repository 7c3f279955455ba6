#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "gpu/nvml/nvml_api.h"

namespace gleaner::gpu::nvml {

// How the driver lays out one entry of a process list.
enum class ProcessInfoLayout {
  kV1,    // 16 bytes: plain symbol, pre-450 drivers
  kV2,    // 24 bytes: `_v2`, and `_v3` on every driver but 535.43-535.86
  kR535,  // 32 bytes: `_v3` on drivers 535.43-535.86
};

size_t EntrySize(ProcessInfoLayout layout);

// One process-list entry point and the layout it writes.
struct ProcessListCall {
  ProcessesFn fn = nullptr;
  ProcessInfoLayout layout = ProcessInfoLayout::kV1;
  bool layout_is_guess = false;  // `_v3`: inferred from which symbols exist
};

// libnvidia-ml.so.1 opened with dlopen, every entry point gleaner uses
// resolved newest version first. Optional entry points are null when the
// driver lacks them; the required ones make Open fail. Owns the dlopen
// handle; does not call nvmlInit. Immutable after Open, so thread-safe.
class NvmlLibrary {
 public:
  // `path`: a file name for the dynamic linker's search ("libnvidia-ml.so.1")
  // or a path. Fails with kUnavailable when there is no such library.
  static core::Result<std::unique_ptr<NvmlLibrary>> Open(const std::string& path);
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  // Required.
  InitFn init = nullptr;
  InitFn shutdown = nullptr;
  CountFn device_count = nullptr;
  HandleByIndexFn handle_by_index = nullptr;
  DeviceStringFn uuid = nullptr;
  // Optional: null when the driver does not export them. Where a newer
  // variant exists (memory_v2, temperature_v) the older one stays resolved as
  // the fallback for a driver that rejects the newer one's struct version.
  StringFn driver_version = nullptr;
  StringFn nvml_version = nullptr;
  IntOutFn cuda_driver_version = nullptr;
  DeviceStringFn name = nullptr;
  PciInfoFn pci_info = nullptr;
  MemoryV2Fn memory_v2 = nullptr;
  MemoryV1Fn memory_v1 = nullptr;
  UtilizationFn utilization = nullptr;
  TemperatureVFn temperature_v = nullptr;
  TemperatureFn temperature = nullptr;
  DeviceUintFn power_usage = nullptr;
  DeviceUintFn power_limit = nullptr;
  ClockInfoFn clock_info = nullptr;
  ProcessListCall compute_processes;
  ProcessListCall graphics_processes;
  ProcessUtilizationFn process_utilization = nullptr;
  CommonAncestorFn common_ancestor = nullptr;
  P2PStatusFn p2p_status = nullptr;
  // Errors and health.
  EccCountFn total_ecc_errors = nullptr;
  DeviceUintFn pcie_replay_counter = nullptr;
  EnableStateFn retired_pages_pending = nullptr;
  RemappedRowsFn remapped_rows = nullptr;
  DeviceU64Fn clock_event_reasons = nullptr;
  EventSetCreateFn event_set_create = nullptr;
  RegisterEventsFn register_events = nullptr;
  EventSetWaitFn event_set_wait = nullptr;
  EventSetFreeFn event_set_free = nullptr;

  // The symbol chosen for each family, "nvmlInit_v2" and so on: what `gleaner
  // gpus --verbose` and bug reports show.
  const std::vector<std::string>& resolved() const { return resolved_; }

 private:
  explicit NvmlLibrary(void* handle) : handle_(handle) {}
  // The first of `names` the library exports, or null.
  void* Resolve(std::initializer_list<const char*> names);
  bool Has(const char* symbol_name) const;

  void* handle_;
  std::vector<std::string> resolved_;
};

}  // namespace gleaner::gpu::nvml
