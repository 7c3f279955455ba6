#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/units.h"
#include "gpu/gpu_snapshot.h"

namespace gleaner::gpu {

// A scripted GPU host: what each GPU reports over time, and how it fails.
// One format drives both the fake libnvidia-ml.so.1 (through the real NVML
// loader) and the in-process FakeBackend. The file format is documented in
// docs/scenarios.md.

// A reading or call that a scenario can make fail. Names follow NVML's
// nvmlReturn_t (NOT_SUPPORTED, NO_PERMISSION, GPU_IS_LOST, ...).
enum class ScenarioError {
  kNotSupported,
  kNoPermission,
  kGpuLost,
  kUnknown,
  kDriverNotLoaded,       // only as the driver's init_error
  kLibRmVersionMismatch,  // only as the driver's init_error
};

// The readings a fault or an "unsupported" entry can target.
enum class ScenarioField {
  kName,
  kPciBusId,
  kMemory,
  kUtilization,
  kTemperature,
  kPower,
  kPowerLimit,
  kSmClock,
  kProcesses,
  kEcc,  // the four ECC counters
  kPcieReplays,
  kRetiredPages,  // the pending retirement (pre-Ampere)
  kRemappedRows,  // the row remap counts and flags (Ampere and later)
  kClockEvents,
  kXidEvents,  // the driver's event set: no Xid events at all
};

// A GPU's error counters in one frame (GpuErrors, as the driver would
// report them).
struct ScenarioErrors {
  uint64_t ecc_corrected_volatile = 0;
  uint64_t ecc_uncorrected_volatile = 0;
  uint64_t ecc_corrected_aggregate = 0;
  uint64_t ecc_uncorrected_aggregate = 0;
  uint32_t pcie_replays = 0;
  bool retirement_pending = false;
  uint32_t remapped_rows_corrected = 0;
  uint32_t remapped_rows_uncorrected = 0;
  bool remap_pending = false;
  bool remap_failed = false;
  uint64_t clock_event_reasons = 0;
};

struct ScenarioProcess {
  uint32_t pid = 0;
  core::Bytes used_memory;
  // The process's own utilization; absent: the GPU's (one process computes
  // all the GPU does).
  std::optional<uint32_t> sm_util_pct;
  bool compute = true;
  bool graphics = false;
  // Not reported by NVML; stands in for /proc where the pid is not a real
  // process on this host (demo and recorded scenarios).
  std::string user;
  std::string command;
};

struct ScenarioFrame;
// What the driver reports as the process's own utilization in `frame`.
uint32_t ProcessUtilization(const ScenarioProcess& process, const ScenarioFrame& frame);

// The state of one GPU from `at_s` until the next frame. Fields a file omits
// are carried over from the previous frame.
struct ScenarioFrame {
  double at_s = 0;
  uint32_t utilization_gpu_pct = 0;
  uint32_t utilization_memory_pct = 0;
  core::Bytes memory_used;
  int32_t temperature_c = 30;
  double power_draw_w = 60;
  uint32_t sm_clock_mhz = 345;
  std::vector<ScenarioProcess> processes;
  ScenarioErrors errors;
  // A critical Xid event the driver raises as this frame starts (0: none).
  // Unlike the other fields it is not carried into later frames.
  uint32_t xid = 0;
};

// A field failing with `error` during [from_s, to_s).
struct ScenarioFault {
  std::set<ScenarioField> fields;
  ScenarioError error = ScenarioError::kUnknown;
  double from_s = 0;
  double to_s = 1e300;
};

struct ScenarioGpu {
  std::string uuid;
  std::string name;
  std::string pci_bus_id;  // sysfs form, "0000:18:00.0"
  core::Bytes memory_total;
  double power_limit_w = 0;
  bool no_permission = false;       // enumerated but not attachable
  std::optional<double> lost_at_s;  // falls off the bus at this time
  std::set<ScenarioField> unsupported;
  std::vector<ScenarioFault> faults;
  std::vector<ScenarioFrame> timeline;  // at least one; the first at 0
};

// GPUs (by index) grouped by what they share; a pair's PCIe level is the
// nearest group holding both, or kCrossSocket.
struct ScenarioTopology {
  std::vector<std::vector<uint32_t>> nvlink;  // fully connected islands
  std::vector<std::vector<uint32_t>> pcie_switch;
  std::vector<std::vector<uint32_t>> host_bridge;
  std::vector<std::vector<uint32_t>> numa_node;
};

struct ScenarioDriver {
  std::string version = "550.54.15";
  std::string nvml_version = "12.550.54.15";
  int32_t cuda_version = 12040;
  std::optional<ScenarioError> init_error;
};

struct Scenario {
  std::string name;
  ScenarioDriver driver;
  std::vector<ScenarioGpu> gpus;
  ScenarioTopology topology;
  std::optional<double> period_s;  // the timeline repeats with this period
};

// What one GPU looks like at a moment.
class ScenarioGpuState {
 public:
  ScenarioGpuState(const ScenarioGpu& gpu, const ScenarioFrame& frame, double t_s)
      : gpu_(&gpu), frame_(&frame), t_s_(t_s) {}

  const ScenarioGpu& gpu() const { return *gpu_; }
  const ScenarioFrame& frame() const { return *frame_; }
  bool lost() const { return gpu_->lost_at_s && t_s_ >= *gpu_->lost_at_s; }
  // The Xid events raised so far: by the frames from the timeline's start
  // to this one (in a periodic scenario, this period's).
  struct Xids {
    uint32_t last = 0;
    uint32_t count = 0;
    uint32_t fatal = 0;  // the newest that is not an application's
  };
  Xids XidsSoFar() const;
  // The error reading `field` gives now, if any; loss beats everything.
  std::optional<ScenarioError> ErrorFor(ScenarioField field) const;

 private:
  const ScenarioGpu* gpu_;
  const ScenarioFrame* frame_;
  double t_s_;
};

// The state of GPU `index` at `t_s` seconds into the scenario. Before 0, a
// periodic scenario repeats and any other looks as it does at 0.
ScenarioGpuState GpuStateAt(const Scenario& scenario, size_t index, double t_s);
PcieLevel PcieLevelBetween(const Scenario& scenario, uint32_t a, uint32_t b);
bool NvlinkBetween(const Scenario& scenario, uint32_t a, uint32_t b);

// Parses scenario JSON. `source` names the text in errors ("demo",
// "/path/x.json"); errors say the line, the path and what was expected.
core::Result<Scenario> ParseScenario(std::string_view text, std::string_view source);

// `name_or_path`: a built-in scenario's name (see BuiltinScenarioNames) or a
// file path.
core::Result<Scenario> LoadScenario(std::string_view name_or_path);

std::string_view ScenarioErrorName(ScenarioError error);

}  // namespace gleaner::gpu
