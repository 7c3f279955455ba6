// Executor's part for container jobs: the podman or apptainer command line,
// and what it needs in the job's environment.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <set>

#include "agent/cdi_devices.h"
#include "agent/container_command.h"
#include "agent/executor.h"

namespace gleaner::agent {

core::Result<std::vector<std::string>> Executor::ContainerCommand(
    const LaunchRequest& req, const Account& account, std::map<std::string, std::string>& env) {
  // The container has its own HOME, PATH and shell; it gets the rest of
  // the job's environment, and what the spec sets, whatever it is.
  static const std::set<std::string> kHostOnly = {"HOME", "USER", "LOGNAME", "SHELL", "PATH"};
  std::vector<std::string> pass;
  for (const auto& [name, value] : env) {
    if (!kHostOnly.contains(name) || req.spec.env.contains(name)) pass.push_back(name);
  }
  ContainerHost host;
  const bool podman = req.spec.container->sif.empty();
  GLEANER_ASSIGN_OR_RETURN(host.program,
                           TrustedProgram(podman ? "podman" : "apptainer", program_dirs_));
  // Podman keeps its state where XDG_RUNTIME_DIR says, and finds its pause
  // process there (StartPodmanPause): the user's login one where there is
  // one, else podman's own choice, made sure of by root (a gleaner that is
  // not root runs jobs as itself, so that choice is its own).
  if (podman && !env.contains("XDG_RUNTIME_DIR")) {
    const std::string login = "/run/user/" + std::to_string(account.uid);
    struct stat st {};
    if (lstat(login.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == account.uid) {
      env["XDG_RUNTIME_DIR"] = login;
    } else if (geteuid() == 0) {
      GLEANER_ASSIGN_OR_RETURN(env["XDG_RUNTIME_DIR"],
                               ContainerRuntimeDir(account.uid, account.gid, runtime_base_));
    } else {
      env["XDG_RUNTIME_DIR"] = "/tmp/podman-run-" + std::to_string(account.uid);
    }
  }
  host.simulated_gpus = simulated_gpus_;
  host.unified_cgroups = UnifiedCgroups();
  if (!req.gpus.empty() && !req.spec.container->image.empty()) host.cdi_gpus = CdiGpuDevices();
  // One name per launch: a requeued job's next start never meets the
  // container its last one left behind.
  const std::string name = "gleaner-job-" + std::to_string(req.id) + "-" +
                           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                              clock_.Now().time_since_epoch())
                                              .count());
  return ContainerArgv(req, pass, host, name);
}

}  // namespace gleaner::agent
