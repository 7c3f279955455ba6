#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/units.h"
#include "observe/minute_rollup.h"
#include "observe/verdict.h"
#include "slurm/slurm_job.h"

namespace gleaner::slurm {

// A GPU of this host as gleaner sees it, for joining with Slurm's view.
struct HostGpu {
  uint32_t index = 0;  // the driver's index, which a GRES index names
  core::GpuUuid uuid;
  std::optional<observe::Verdict> verdict;
  int processes = 0;  // GPU processes on it now
};

// One GPU a Slurm job holds on this host, with gleaner's verdict on it.
struct AllocatedGpu {
  uint32_t index = 0;
  core::GpuUuid uuid;  // empty when this host has no GPU of that index
  std::optional<observe::Verdict> verdict;
  int processes = 0;

  // Idle or held idle: allocated, and nothing computes on it.
  bool Unused() const;
};

// A Slurm job that holds GPUs of this host.
struct JobOnHost {
  SlurmJob job;
  std::vector<AllocatedGpu> gpus;

  // How many of its GPUs it has left unused for at least `at_least`, at
  // `now`: counted from the job's start, not from when the GPU quieted.
  int UnusedGpus(core::TimePoint now, core::Duration at_least = {}) const;
  // How long the most recently quieted of those has been unused.
  std::optional<core::Duration> UnusedFor(core::TimePoint now, core::Duration at_least = {}) const;
};

// The jobs among `jobs` holding GPUs of node `node`, each GPU joined to
// `gpus` by index (a gres.conf listing /dev/nvidia0.. in order, as sites
// write it, makes the GRES index the driver's index).
std::vector<JobOnHost> JobsOnHost(const std::vector<SlurmJob>& jobs, const std::string& node,
                                  const std::vector<HostGpu>& gpus);

// The Slurm job holding GPU `index` of this host, or null.
const JobOnHost* HolderOf(const std::vector<JobOnHost>& jobs, uint32_t index);

// A job's GPU time on this host since it started, from gleaner's minutes.
struct JobUsage {
  double allocated_gpu_hours = 0;  // GPUs times time since the start
  double observed_gpu_hours = 0;   // of which gleaner watched
  double used_gpu_hours = 0;       // busy and computing
  double idle_gpu_hours = 0;       // idle, no process
  double held_idle_gpu_hours = 0;  // a process held memory, computed nothing

  double UnusedGpuHours() const { return idle_gpu_hours + held_idle_gpu_hours; }
  JobUsage& operator+=(const JobUsage& o);
};
// `rollups` holds each GPU's minutes (any span; those before the job's
// start are left out). A job without a start time has no usage.
JobUsage UsageOf(const JobOnHost& job,
                 const std::map<core::GpuUuid, std::vector<observe::MinuteRollup>>& rollups,
                 core::TimePoint now);

}  // namespace gleaner::slurm
