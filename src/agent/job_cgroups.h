#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "agent/cgroup_limits.h"
#include "core/result.h"
#include "sched/job_spec.h"

namespace gleaner::agent {

// One cgroup (v2) per job, where the system allows: every process a job
// starts stays in it, even one that leaves the job's process group (setsid,
// a daemonising double fork), so stopping a job (cgroup.kill) and asking
// whether anything of it is left cover them all. Jobs go under
// <this process's cgroup>/<leaf>/job-<id>-<launch>, one leaf per daemon
// (beside this process's cgroup where that is kDaemonLeaf). Only
// directories and control files are touched; no controller is enabled, so
// the limits the system sets on gleaner's own cgroup hold for its jobs too,
// until EnableLimits turns on what holds jobs to the CPUs and memory they
// asked.
class JobCgroups {
 public:
  // The leaf a daemon may run in (systemd's DelegateSubgroup=): its jobs'
  // base is then beside it, not under it.
  static constexpr const char* kDaemonLeaf = "gleaner-daemon";

  // Finds the cgroup2 mount (/proc/self/mountinfo) and this process's
  // cgroup (/proc/self/cgroup) and makes sure jobs can be placed there.
  // NotSupported, saying why, where they cannot (no cgroup2, no write
  // access, no cgroup.kill): jobs then rely on their process group.
  // `leaf` names the directory under this process's cgroup.
  static core::Result<JobCgroups> Open(const std::string& leaf);

  // Creates a cgroup for one launch of job `id`: a requeued job's next run
  // gets a fresh one, never the one its last run's leftovers linger in.
  // Its path, for the child to join.
  core::Result<std::string> Create(sched::JobId id) const;
  // The cgroup `pid` is in, when it is one of ours (a job taken back after
  // a restart).
  std::optional<std::string> Of(pid_t pid) const;
  // Every job cgroup there is now (left by ended jobs, or by a gleaner that
  // stopped before it could remove them).
  std::vector<std::string> List() const;
  // Removes what gleaners with other data directories left beside this
  // one's base (siblings named gleaner-jobs-*: a daemon killed before it
  // could clean up): their job cgroups that are empty and were made over
  // `min_age` ago (younger ones may be a live daemon's launch in progress),
  // then each base left empty. A cgroup with a process in it is never
  // touched: its job may yet be taken back. How many were removed.
  int SweepStaleBases(std::chrono::seconds min_age = std::chrono::seconds(60)) const;
  // Kills every process in the cgroup at `path`.
  static core::Status Kill(const std::string& path);
  // Removes the job cgroup at `path` once nothing is left in it, with its
  // v1 limit directories; kFailedPrecondition while processes remain.
  core::Status Remove(const std::string& path) const;

  // Finds, and turns on, the controllers that hold jobs to their CPUs and
  // memory (CgroupLimits::Find); Describe() says which.
  void EnableLimits() { limits_ = CgroupLimits::Find(base_, true); }
  const CgroupLimits& limits() const { return limits_; }

  const std::string& base() const { return base_; }
  // Removes the directory of all jobs (tests); fails while any job's is left.
  core::Status RemoveBase() const;

 private:
  JobCgroups(std::string mount, std::string base)
      : mount_(std::move(mount)), base_(std::move(base)) {}
  std::string mount_;  // where cgroup2 is mounted
  std::string base_;
  CgroupLimits limits_;  // none until EnableLimits
};

// For the child between fork and exec (async-signal-safe): moves the
// calling process into the cgroup whose cgroup.procs is `procs_file`.
// False when it could not.
bool JoinCgroup(const char* procs_file);

}  // namespace gleaner::agent
