#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"
#include "gpu/nvml/nvml_library.h"

namespace gleaner::gpu {

// The GpuBackend over NVIDIA's NVML, loaded at run time. Create() loads the
// library, initialises NVML and attaches every GPU once; GPUs are then read
// through the handles found at start, so a GPU that falls off the bus stays
// in the list as lost. The destructor shuts NVML down. Not thread-safe.
class NvmlBackend final : public GpuBackend {
 public:
  // Fails with kUnavailable (and a message saying what to install or fix)
  // when there is no usable driver.
  static core::Result<std::unique_ptr<NvmlBackend>> Create(
      const std::string& library = "libnvidia-ml.so.1");
  ~NvmlBackend() override;
  NvmlBackend(const NvmlBackend&) = delete;
  NvmlBackend& operator=(const NvmlBackend&) = delete;

  const DriverInfo& Driver() const override { return driver_; }
  core::Result<std::vector<GpuSnapshot>> Snapshot() override;
  core::Result<std::vector<GpuLink>> Topology() override;

  const nvml::NvmlLibrary& library() const { return *lib_; }

 private:
  struct Device {
    nvmlDevice_t handle = nullptr;  // null when the GPU could not be attached
    GpuSnapshot identity;           // index, uuid, name, PCI bus id, health at attach
    // The newest per-process utilization sample taken (the driver's µs):
    // each pass asks only for what came after it.
    mutable unsigned long long utilization_seen_us = 0;
    // Critical Xid events the event set delivered since attach: the driver
    // reports each once, so they are kept here. `xid_error` is the failure
    // of registering for them or of the last wait, when there was one.
    uint32_t last_xid = 0;
    uint32_t xid_count = 0;
    uint32_t fatal_xid = 0;
    nvmlReturn_t xid_error = NVML_SUCCESS;  // of registering for them
  };

  explicit NvmlBackend(std::unique_ptr<nvml::NvmlLibrary> lib) : lib_(std::move(lib)) {}
  void ReadDriverInfo();
  core::Status Attach();
  GpuSnapshot Read(const Device& device) const;
  void ReadMemory(nvmlDevice_t handle, GpuSnapshot* s, bool* lost) const;
  Reading<int32_t> ReadTemperature(nvmlDevice_t handle, bool* lost) const;
  Reading<std::vector<GpuProcess>> ReadProcesses(nvmlDevice_t handle, core::Bytes total,
                                                 bool* lost) const;
  void ReadProcessUtilization(const Device& device, std::vector<GpuProcess>& processes,
                              bool* lost) const;
  void WatchXids();
  void DrainXids();
  GpuErrors ReadErrors(const Device& device, bool* lost) const;

  std::unique_ptr<nvml::NvmlLibrary> lib_;
  DriverInfo driver_;
  std::vector<Device> devices_;
  nvmlEventSet_t xid_events_ = nullptr;  // null where the driver has no event sets
};

}  // namespace gleaner::gpu
