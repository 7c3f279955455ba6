#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/account.h"
#include "agent/job_cgroups.h"
#include "agent/job_runner.h"
#include "agent/trusted_program.h"
#include "core/clock.h"
#include "core/ids.h"
#include "core/result.h"
#include "core/terminal_handoff.h"
#include "sched/job_spec.h"

namespace gleaner::agent {

// Empties a job's log grown past `max_bytes`, leaving a note of what was
// dropped. The job appends (O_APPEND), so it writes on at the new end.
void TrimLog(const std::string& path, uint64_t max_bytes);

// Opens `log_dir`/`name` for appending a job's output, as root may safely
// do in a directory others could have written: never through a link, never
// anything but a plain file with a single name. A file this call creates is
// given to `owner` (when set) so the job's user can read it; an existing one
// is never chowned. Returns the descriptor (O_CLOEXEC), which the caller
// closes.
core::Result<int> OpenJobLog(const std::string& log_dir, const std::string& name,
                             std::optional<uid_t> owner, gid_t group);

// Writes a gang member's <log_dir>/<id>.hosts (HostfileText), as OpenJobLog
// opens files, replacing an earlier attempt's.
core::Status WriteHostfile(const LaunchRequest& req, std::optional<uid_t> owner, gid_t group);

// Starts jobs as their users and ends them. Each job runs in its own
// session and process group with no controlling terminal, stdin from
// /dev/null and no descriptor of gleaner's but its two log files, as the
// submitting user (supplementary groups included), with CUDA_VISIBLE_DEVICES set to its GPUs' UUIDs
// and GLEANER_JOB_ID set (process attribution recognises gleaner's own processes by it), stdout and
// stderr in files. The group's first process is gleaner's own: it waits for the job and records how
// it ended beside its logs, so a gleaner restarted meanwhile still learns the exit status (and does
// not run a finished job again). A gleaner not running as root can start jobs only as its own user:
// it never pretends. With cgroups (UseCgroups), each job also gets a cgroup of its own: SIGKILL
// then reaches processes that left the process group, and when a job's first process ends, whatever
// it left running is killed too, so nothing of it keeps a GPU. An interactive session (spec.pty)
// has a pseudo-terminal instead of /dev/null and its logs, as its controlling terminal; its master
// goes to the TerminalHandoff for its user's client, and gleaner writes on the terminal what the
// user must know (that the session is being ended, and when). Not thread-safe.
class Executor final : public JobRunner {
 public:
  explicit Executor(const core::Clock& clock) : clock_(clock) {}
  ~Executor() override;
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  void UseCgroups(JobCgroups cgroups) { cgroups_ = std::move(cgroups); }

  // This host's GPUs are simulated: a container job gets no device for
  // them, only their UUIDs (docs/jobs.md, "Containers").
  void SimulatedGpus(bool simulated) { simulated_gpus_ = simulated; }

  // Where podman and apptainer are looked for (only files root's alone
  // count, TrustedProgram), and where root makes sure of users' podman
  // runtime directories (ContainerRuntimeDir); by default RootProgramDirs()
  // and /tmp.
  void FindContainerToolsIn(std::vector<std::string> dirs, std::string runtime_base) {
    program_dirs_ = std::move(dirs);
    runtime_base_ = std::move(runtime_base);
  }

  // Where sessions' terminals wait for their clients; without it, a
  // session cannot start here.
  void UseTerminals(std::shared_ptr<core::TerminalHandoff> terminals) {
    terminals_ = std::move(terminals);
  }

  // The most a job's stdout (or stderr) log may hold: a job printing
  // forever must not fill the partition under the database. Past it, Reap
  // empties the log and notes how much was dropped; the job writes on.
  void CapLogs(uint64_t max_bytes) { max_log_bytes_ = max_bytes; }
  static constexpr uint64_t kDefaultMaxLogBytes = uint64_t{1} << 30;

  // Fails with a message naming the cause (unknown user, command not
  // found or not executable, working directory missing, no permission to
  // switch user) without leaving a process behind.
  core::Result<RunningJob> Launch(const LaunchRequest& request) override;

  // Takes back a job started before a restart, if process `pid` is still
  // the one that started at `process_started_at`. NotFound otherwise.
  // `log_dir` is the one it was launched with: how it ends is read there.
  core::Status Adopt(sched::JobId id, pid_t pid, core::TimePoint process_started_at,
                     const std::string& log_dir);
  // The same, for a job that left its process behind (NotFound otherwise).
  core::Status Adopt(const JobHandle& job) override;

  // How a job that ended while no gleaner watched it ended, as its first
  // process recorded beside its logs in `log_dir` (the record is then
  // removed); nullopt when it could not record it (killed with it).
  static std::optional<JobExit> EndedWhileAway(sched::JobId id, const std::string& log_dir);
  std::optional<JobExit> EndedWhileAway(const JobHandle& job) override {
    return EndedWhileAway(job.id, job.log_dir);
  }

  // After a restart, once running jobs are taken back: the job cgroups no
  // running job holds are leftovers of jobs that ended meanwhile; what is
  // in them is killed and they are removed (now, or on a later Reap).
  void SweepLeftovers() override;

  // Collects jobs that ended since the last call, and caps the logs of
  // those still running (CapLogs); never blocks.
  std::vector<JobExit> Reap() override;

  // Sends `signal` to the job's whole process group (checkpoint signal,
  // then SIGKILL after the grace: the caller keeps the time). A session's
  // user reads on its terminal what is happening.
  core::Status Signal(sched::JobId id, int signal) override;

  void Tell(sched::JobId id, const std::string& why) override;

  const std::map<sched::JobId, RunningJob>& running() const override { return running_; }

 private:
  core::Result<RunningJob> Start(const LaunchRequest& request);
  // The podman or apptainer command line that runs a container job, and
  // what it needs in the job's environment `env`.
  core::Result<std::vector<std::string>> ContainerCommand(const LaunchRequest& req,
                                                          const Account& account,
                                                          std::map<std::string, std::string>& env);

  // Closes an ended session's notices descriptor.
  void CloseNotices(sched::JobId id);
  // Removes a launch's cgroup `path` (empty: none) that never held a job.
  void RemoveCgroup(const std::string& path);
  // Kills what an ended job left behind in cgroup `path` and removes it
  // (again on later calls while processes linger).
  void Sweep(const std::string& path);

  const core::Clock& clock_;
  std::map<sched::JobId, RunningJob> running_;
  std::optional<JobCgroups> cgroups_;
  std::set<std::string> lingering_;  // cgroups of ended jobs, not yet removed
  std::shared_ptr<core::TerminalHandoff> terminals_;
  // Running sessions: where gleaner writes to their users, and their grace.
  struct Notices {
    int fd = -1;
    core::Duration grace{};
  };
  std::map<sched::JobId, Notices> notices_;
  uint64_t max_log_bytes_ = kDefaultMaxLogBytes;
  bool simulated_gpus_ = false;
  std::vector<std::string> program_dirs_ = RootProgramDirs();
  std::string runtime_base_ = "/tmp";
};

}  // namespace gleaner::agent
