#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/process_info.h"
#include "core/units.h"
#include "gpu/gpu_backend.h"
#include "observe/verdict.h"
#include "slurm/allocation.h"

namespace gleaner::views {

// A GPU process with who runs it, when the host can tell.
struct ProcessView {
  gpu::GpuProcess process;
  std::optional<agent::ProcessInfo> owner;
};

struct GpuView {
  gpu::GpuSnapshot snapshot;
  std::vector<ProcessView> processes;
  std::optional<observe::Verdict> verdict;
};

// Everything `gleaner gpus` shows: one pass over the backend, attributed
// and judged.
struct HostView {
  core::TimePoint taken_at;
  std::string hostname;
  gpu::DriverInfo driver;
  std::vector<GpuView> gpus;
  std::vector<gpu::GpuLink> topology;  // empty unless asked for
  // Where [slurm] is on: the Slurm jobs holding this host's GPUs, as of
  // `slurm_at`, and why Slurm could not be asked (the jobs are then the
  // last known, or none).
  bool slurm = false;
  std::vector<slurm::JobOnHost> slurm_jobs;
  std::optional<core::TimePoint> slurm_at;
  std::string slurm_node;
  std::string slurm_error;
};

// Builds the view of one pass; `verdicts` are matched to GPUs by UUID.
HostView BuildHostView(core::TimePoint at, const gpu::DriverInfo& driver,
                       std::vector<gpu::GpuSnapshot> snapshots,
                       const agent::ProcessInspector& inspector,
                       const std::map<core::GpuUuid, observe::Verdict>& verdicts);

// This host's GPUs as the Slurm join needs them: index, UUID, verdict
// (from `verdicts`, matched by UUID) and how many processes are on each.
std::vector<slurm::HostGpu> SlurmHostGpus(const std::vector<gpu::GpuSnapshot>& snapshots,
                                          const std::vector<observe::Verdict>& verdicts);

// Joins Slurm's jobs to the view's GPUs (by index on node `node`), with
// their verdicts; `error` says why Slurm's answer is old or missing.
void AttachSlurmJobs(HostView& view, const std::string& node,
                     const std::vector<slurm::SlurmJob>& jobs, std::optional<core::TimePoint> as_of,
                     std::string error);

// Reads every GPU once and attributes its processes (no verdicts).
core::Result<HostView> ReadHost(gpu::GpuBackend& backend, const agent::ProcessInspector& inspector,
                                core::TimePoint now, bool with_topology);

}  // namespace gleaner::views
