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
  // podman's (or apptainer's) absolute path, from root's own directories
  // (TrustedProgram): never the first one on the job's PATH.
  std::string program;
};

// The command line that runs `req`'s command in its container
// (req.spec.container must be set), `host.program` first:
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

// Where rootless podman keeps a user's state when the user has no login
// runtime directory (/run/user/UID): BASE/podman-run-UID, podman's own
// choice then (so a job and the user's own podman share their state), but
// made sure of by root: the user's directory, mode 0700, not a link. What
// another user put there first, to break the user's container jobs or read
// them, is moved aside (BASE/podman-run-UID.not-uid-UID.TIME) and the
// directory made anew. BASE must be root's, sticky where others write it.
core::Result<std::string> ContainerRuntimeDir(uint32_t uid, uint32_t gid,
                                              const std::string& base = "/tmp");

}  // namespace gleaner::agent
