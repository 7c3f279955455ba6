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
  kFaulty,        // attached, but its error counters or Xid events say it is
                  // failing (see JudgeErrors); health_detail says which
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

// What the driver counts of a GPU's hardware errors, and why its clocks are
// held down: what tells a failing GPU from a healthy one before it falls off
// the bus (the fields dcgm-exporter users watch).
struct GpuErrors {
  // ECC errors in device memory: "volatile" since the driver loaded,
  // "aggregate" over the GPU's life. Corrected ones are a warning;
  // uncorrected ones corrupted data.
  Reading<uint64_t> ecc_corrected_volatile;
  Reading<uint64_t> ecc_uncorrected_volatile;
  Reading<uint64_t> ecc_corrected_aggregate;
  Reading<uint64_t> ecc_uncorrected_aggregate;
  // PCIe link retransmissions since the driver loaded: a bad riser or slot.
  Reading<uint32_t> pcie_replays;
  // Pre-Ampere: a page retired for ECC errors takes effect at the next reset.
  Reading<bool> retirement_pending;
  // Ampere and later: rows of memory remapped for ECC errors; a pending
  // remap takes effect at the next reset, a failed one means the GPU needs
  // replacing.
  Reading<uint32_t> remapped_rows_corrected;
  Reading<uint32_t> remapped_rows_uncorrected;
  Reading<bool> remap_pending;
  Reading<bool> remap_failed;
  // NVML's clock event (throttle) reasons bitmask: 0x8 hardware slowdown,
  // 0x40 hardware thermal slowdown, 0x80 power brake, and benign ones.
  Reading<uint64_t> clock_event_reasons;
  // The newest critical Xid the driver reported since gleaner attached, and
  // how many; 0 and 0 when none. `fatal_xid` is the newest that is not an
  // application's own (IsApplicationXid): a crashing program's Xid 13 after
  // an Xid 48 does not hide the 48.
  Reading<uint32_t> last_xid;
  Reading<uint32_t> xid_count;
  Reading<uint32_t> fatal_xid;

  bool operator==(const GpuErrors&) const = default;
};

// NVML's clock event reasons that mean the hardware itself slowed the GPU.
inline constexpr uint64_t kHardwareSlowdownReasons = 0x8 | 0x40 | 0x80;

// Xids that an application's own bug raises (NVIDIA's device plugin skips
// the same): 13 graphics engine exception, 31 memory page fault, 43 GPU
// stopped processing, 45 preemptive cleanup, 68 video processor exception.
// Any other critical Xid makes a GPU faulty.
bool IsApplicationXid(uint32_t xid);

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
  GpuErrors errors;

  bool operator==(const GpuSnapshot&) const = default;
};

// Makes an attached, otherwise healthy GPU kFaulty when its errors say it
// is failing, with every reason and what to do in health_detail: an
// uncorrected ECC error since the driver loaded, a pending page retirement
// or row remap, a failed row remap, or a critical Xid that is not an
// application's. Warnings (corrected errors, PCIe replays, slowdowns) leave
// it healthy: they are in the readings for alerts and dashboards. Both
// backends call it after reading, so the fake and the real driver agree, and
// FaultMemory again after adding a remembered Xid: a GPU it made faulty
// before is judged afresh.
void JudgeErrors(GpuSnapshot& s);

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
