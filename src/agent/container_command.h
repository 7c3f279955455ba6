#pragma once

#include <set>
#include <string>
#include <vector>

#include "agent/job_runner.h"
#include "core/result.h"

namespace gleaner::agent {

// What this host gives a job's container.
struct ContainerHost {
  // The CDI names of its GPUs (CdiGpuDevices): a GPU named by its UUID is
  // passed to podman with --device nvidia.com/gpu=UUID.
  std::set<std::string> cdi_gpus;
  // Simulated GPUs have no device to pass: the container learns its GPUs
  // from CUDA_VISIBLE_DEVICES alone.
  bool simulated_gpus = false;
  // cgroup v2 alone: rootless podman would move its monitor (conmon) to a
  // cgroup of its own, out of the job's, unless told not to.
  bool unified_cgroups = false;
};

// The command line that runs `req`'s command in its container
// (req.spec.container must be set):
//   podman run --rm --init ... IMAGE COMMAND...   (rootless, as the job's user)
//   apptainer exec [--nv] ... FILE.sif COMMAND...
// `pass_env` names the job's variables the container gets (podman takes
// their values from its own environment, so none shows in ps); `name` is
// the container's. FailedPrecondition, saying how to mend it, where a real
// GPU has no CDI device to pass.
core::Result<std::vector<std::string>> ContainerArgv(const LaunchRequest& req,
                                                     const std::vector<std::string>& pass_env,
                                                     const ContainerHost& host,
                                                     const std::string& name);

// Whether /sys/fs/cgroup is cgroup v2 alone.
bool UnifiedCgroups();

}  // namespace gleaner::agent
