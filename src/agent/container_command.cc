#include "agent/container_command.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "agent/cdi_devices.h"

namespace gleaner::agent {
namespace {

std::string SpecDirs() {
  std::string out;
  for (const std::string& dir : kCdiSpecDirs) out += (out.empty() ? "" : " and ") + dir;
  return out;
}

// The GPUs' podman flags; every real GPU needs a CDI device named by its
// UUID (the index a spec also gives may differ from NVML's order).
core::Result<std::vector<std::string>> GpuDevices(const LaunchRequest& req,
                                                  const ContainerHost& host) {
  std::vector<std::string> out;
  for (const core::GpuUuid& gpu : req.gpus) {
    if (host.cdi_gpus.contains(gpu.str())) {
      out.push_back("--device");
      out.push_back("nvidia.com/gpu=" + gpu.str());
    } else if (!host.simulated_gpus) {
      return core::FailedPrecondition(
          "no CDI spec names GPU " + gpu.str() + " (looked in " + SpecDirs() +
          "), so its container could not use it; "
          "as root, run `nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml` "
          "(nvidia-container-toolkit) and submit again");
    }
  }
  return out;
}

}  // namespace

core::Result<std::vector<std::string>> ContainerArgv(const LaunchRequest& req,
                                                     const std::vector<std::string>& pass_env,
                                                     const ContainerHost& host,
                                                     const std::string& name) {
  const sched::ContainerSpec& c = *req.spec.container;
  std::vector<std::string> argv;
  if (!c.sif.empty()) {
    // Apptainer runs the container as the user, in the job's own process
    // group, and passes the environment in whole.
    argv = {host.program, "exec"};
    if (!host.simulated_gpus) argv.push_back("--nv");
    if (!req.spec.working_dir.empty()) argv.insert(argv.end(), {"--pwd", req.spec.working_dir});
    for (const sched::ContainerMount& m : c.mounts) {
      argv.insert(argv.end(), {"--bind", sched::ContainerMountToString(m)});
    }
    argv.push_back(c.sif);
  } else {
    GLEANER_ASSIGN_OR_RETURN(std::vector<std::string> devices, GpuDevices(req, host));
    // --init: a small init is the container's first process, so the
    // checkpoint signal podman passes on reaches the job's command even
    // when it is process 1's. Host networking, as a job on the host has:
    // gangs rendezvous and notebooks listen on the host's addresses.
    // keep-id: inside, the job is its user, and files it writes to a mount
    // are the user's. No log driver: the output comes to the job's logs
    // only, not to a copy in the user's container storage.
    argv = {host.program, "run",  "--rm",     "--init",  "--name",       name,
            "--network",  "host", "--userns", "keep-id", "--log-driver", "none"};
    if (host.unified_cgroups) argv.insert(argv.end(), {"--cgroups", "disabled"});
    if (!req.spec.working_dir.empty()) argv.insert(argv.end(), {"--workdir", req.spec.working_dir});
    for (const sched::ContainerMount& m : c.mounts) {
      argv.insert(argv.end(), {"--volume", sched::ContainerMountToString(m)});
    }
    for (const std::string& var : pass_env) argv.insert(argv.end(), {"--env", var});
    argv.insert(argv.end(), devices.begin(), devices.end());
    argv.push_back(c.image);
  }
  argv.insert(argv.end(), req.spec.command.begin(), req.spec.command.end());
  return argv;
}

core::Result<std::string> ContainerRuntimeDir(uint32_t uid, uint32_t gid, const std::string& base) {
  const std::string dir = base + "/podman-run-" + std::to_string(uid);
  const auto fail = [&](const std::string& why) {
    return core::FailedPrecondition("cannot prepare podman's runtime directory " + dir + ": " +
                                    why);
  };
  struct stat st {};
  if (lstat(base.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
      ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0)) {
    return fail(base + " is not a directory of root's where users cannot replace others' files");
  }
  for (int attempt = 0; attempt < 3; ++attempt) {
    const bool made = mkdir(dir.c_str(), 0700) == 0;
    if (!made && errno != EEXIST) return fail(std::strerror(errno));
    // Opened without following a link, then judged and set through the
    // descriptor: what is judged is what is used.
    const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0 && (made || st.st_uid == uid)) {
      const bool set = fchown(fd, uid, gid) == 0 && fchmod(fd, 0700) == 0;
      const std::string why = std::strerror(errno);
      close(fd);
      if (!set) return fail(why);
      return dir;
    }
    if (fd >= 0) close(fd);
    // A link, a file, or another user's directory, made first to break
    // or read the user's containers: moved aside (rename never follows the
    // link it moves), kept for root to look at, and made anew.
    const std::string aside =
        dir + ".not-uid-" + std::to_string(uid) + "." +
        std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count());
    if (rename(dir.c_str(), aside.c_str()) != 0 && errno != ENOENT) {
      return fail(std::string("it is not the user's, and cannot be moved aside: ") +
                  std::strerror(errno));
    }
  }
  return fail("it was replaced again while being made");
}

bool UnifiedCgroups() {
  struct statfs fs {};
  return statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

}  // namespace gleaner::agent
