#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include "testing/temp_dir.h"

namespace gleaner::testing {

// A whole Slurm cluster on this host (tests/testing/local_slurm.sh): munged,
// slurmctld, one slurmd with `gpus` fake GPU devices and slurmrestd with
// JWT, all state in a directory of its own, stopped with the object. Needs
// root and Debian's Slurm packages: without them `skip_reason()` says so,
// for GTEST_SKIP; any other failure to start is `error()`, for the test to
// fail on.
class LocalSlurm {
 public:
  explicit LocalSlurm(int gpus = 4) {
    if (geteuid() != 0) {
      skip_ = "needs root: slurmd runs jobs as their users";
      return;
    }
    const std::string cmd = Script() + " start " + dir_.path().string() + " " +
                            std::to_string(gpus) + " >" + Log() + " 2>&1";
    const int status = std::system(cmd.c_str());
    if (status != 0) {
      // The script exits 3 when a package is missing.
      (WIFEXITED(status) && WEXITSTATUS(status) == 3 ? skip_ : error_) =
          "local Slurm did not start: " + Slurp(Log());
      return;
    }
    std::istringstream lines(Slurp(dir_.path() / "env"));
    std::string line;
    while (std::getline(lines, line)) {
      const size_t eq = line.find('=');
      if (eq != std::string::npos) env_[line.substr(0, eq)] = line.substr(eq + 1);
    }
    started_ = true;
  }
  ~LocalSlurm() {
    if (started_) {
      std::system((Script() + " stop " + dir_.path().string() + " >/dev/null 2>&1").c_str());
    }
  }
  LocalSlurm(const LocalSlurm&) = delete;
  LocalSlurm& operator=(const LocalSlurm&) = delete;

  const std::string& skip_reason() const { return skip_; }
  const std::string& error() const { return error_; }
  std::string dir() const { return dir_.path().string(); }
  std::string conf() const { return Env("SLURM_CONF"); }
  std::string node() const { return Env("GLEANER_SLURM_NODE"); }
  std::string restd_url() const { return Env("GLEANER_SLURMRESTD"); }

  // Runs a Slurm client command line (sbatch, squeue, scontrol...) with
  // this cluster's configuration, as `user` when given; its stdout.
  std::string Run(const std::string& command, const std::string& user = "") const {
    const std::string env = "SLURM_CONF=" + conf() + " PATH=$PATH:/usr/sbin ";
    const std::string line =
        user.empty() ? env + command : "runuser -u " + user + " -- env " + env + command;
    TempDir out;
    std::system(("cd /tmp && " + line + " >" + (out.path() / "o").string() + " 2>&1").c_str());
    return Slurp(out.path() / "o");
  }

 private:
  static std::string Script() {
    return std::string("bash ") + GLEANER_SOURCE_DIR + "/tests/testing/local_slurm.sh";
  }
  std::string Log() const { return (log_dir_.path() / "start.log").string(); }
  std::string Env(const std::string& name) const {
    const auto it = env_.find(name);
    return it == env_.end() ? "" : it->second;
  }

  TempDir dir_;
  TempDir log_dir_;
  std::map<std::string, std::string> env_;
  std::string skip_;
  std::string error_;
  bool started_ = false;
};

}  // namespace gleaner::testing
