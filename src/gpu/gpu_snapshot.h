#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/units.h"
#include "gpu/reading.h"

namespace gleaner::gpu {

// Whether gleaner can use the GPU at all.
enum class GpuHealth {
  kOk,
  kNoPermission,  // enumerated but not accessible to this process: unmanaged
  kLost,          // fell off the bus (XID 79); stays lost until reset or reboot
  kError,         // the driver could not attach to it; see health_detail
};

std::string_view GpuHealthName(GpuHealth health);

struct GpuSnapshot;
// Marks every per-snapshot reading (memory through processes) unreadable:
// what a GPU that could not be attached reports.
void FailAllReadings(GpuSnapshot& s, Unreadable why, const std::string& detail);

// A process holding a context on a GPU, as the driver reports it. `pid` is in
// the host's PID namespace (the driver does not know about containers).
struct GpuProcess {
  uint32_t pid = 0;
  Reading<core::Bytes> used_memory;  // kNotSupported where the driver cannot say
  // Its share of the GPU's time computing since the last snapshot (the
  // driver's per-process samples): what tells a quiet holder from the job
  // gleaner runs beside it. 0 when the driver saw it do nothing.
  Reading<uint32_t> sm_utilization_pct;
  bool compute = false;   // listed among compute processes
  bool graphics = false;  // listed among graphics processes

  bool operator==(const GpuProcess&) const = default;
};

// Everything read from one GPU in one pass. Units are in the names.
struct GpuSnapshot {
  uint32_t index = 0;  // the driver's enumeration order; NOT stable across reboots
  core::GpuUuid uuid;  // the identity; empty only when the GPU could not be attached
  GpuHealth health = GpuHealth::kOk;
  std::string health_detail;  // why health is not kOk, in words

  Reading<std::string> name;        // "NVIDIA H100 80GB HBM3"
  Reading<std::string> pci_bus_id;  // sysfs form, "0000:18:00.0"
  Reading<core::Bytes> memory_total;
  Reading<core::Bytes> memory_used;          // includes driver-reserved memory
  Reading<uint32_t> utilization_gpu_pct;     // time a kernel ran over the driver's window
  Reading<uint32_t> utilization_memory_pct;  // time memory was read or written
  Reading<int32_t> temperature_c;
  Reading<double> power_draw_w;
  Reading<double> power_limit_w;
  Reading<uint32_t> sm_clock_mhz;
  Reading<std::vector<GpuProcess>> processes;  // compute and graphics, merged by pid

  bool operator==(const GpuSnapshot&) const = default;
};

// How the PCIe path between two GPUs looks, nearest first (NVML's
// nvmlGpuTopologyLevel_t, renamed for readers).
enum class PcieLevel {
  kSameBoard,         // one board (multi-GPU cards)
  kSinglePcieSwitch,  // behind one PCIe switch
  kMultiplePcieSwitches,
  kHostBridge,    // same PCIe host bridge
  kSameNumaNode,  // same CPU socket / NUMA node, different host bridges
  kCrossSocket,   // across the inter-socket link (SMP interconnect)
};

std::string_view PcieLevelName(PcieLevel level);

// The connection between two GPUs, keyed by UUID.
struct GpuLink {
  core::GpuUuid a;
  core::GpuUuid b;
  Reading<PcieLevel> pcie;
  Reading<bool> nvlink;  // peer-to-peer over NVLink (direct or through NVSwitch)

  bool operator==(const GpuLink&) const = default;
};

// Facts about the driver stack, read once.
struct DriverInfo {
  std::string source;  // "nvml" or "fake:<scenario>"
  Reading<std::string> driver_version;
  Reading<std::string> nvml_version;
  Reading<int32_t> cuda_driver_version;  // 12040 means CUDA 12.4

  bool operator==(const DriverInfo&) const = default;
};

}  // namespace gleaner::gpu
