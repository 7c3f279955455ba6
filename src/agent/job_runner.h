#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/agent_protocol.h"
#include "core/clock.h"
#include "core/ids.h"
#include "core/result.h"
#include "gpu/gpu_snapshot.h"
#include "sched/job_spec.h"

namespace gleaner::agent {

// What to start: a job's spec, for a user, on GPUs.
struct LaunchRequest {
  sched::JobId id = 0;
  uint32_t uid = 0;  // the submitter; the job runs as this user
  sched::JobSpec spec;
  std::vector<core::GpuUuid> gpus;
  std::string log_dir;  // <log_dir>/<id>.out and .err
  // A task of an array: GLEANER_ARRAY_ID and GLEANER_ARRAY_TASK_ID tell it
  // which one it is.
  std::optional<sched::JobId> array_id;
  int64_t array_index = 0;
  // Lent beside a holder: the memory it may use per GPU. An MPS server
  // (where the admin runs one) refuses it more; elsewhere the agent's
  // watch is the cap (docs/held-idle.md).
  std::optional<core::Bytes> gpu_memory_cap;
  // One member of a gang over several nodes: its rank and peers, which its
  // environment and <log_dir>/<id>.hosts tell it.
  std::optional<cluster::GangRole> gang = std::nullopt;
};

struct RunningJob {
  sched::JobId id = 0;
  pid_t pid = 0;  // also the process group id
  core::TimePoint started_at;
  std::optional<core::TimePoint> process_started_at;  // from /proc: pid + this name it
  bool adopted = false;                               // found again after a restart: not our child
  std::string stdout_path;
  std::string stderr_path;
  std::string cgroup;     // the cgroup holding its processes (JobCgroups); empty: none
  std::string exit_path;  // where its first process records how it ended
  // Run through Slurm (bridge mode): its Slurm job id, and what Slurm last
  // said of it ("PENDING (Resources)", "RUNNING on node n1").
  std::string slurm_job_id;
  std::string slurm_state;
  std::optional<uint32_t> uid;  // its user's: only their processes can be the job's
};

struct JobExit {
  sched::JobId id = 0;
  std::optional<int> exit_code;  // set when it exited
  std::optional<int> signal;     // set when a signal ended it
  core::TimePoint at;
  // An adopted job (not our child) whose first process was killed before
  // it could record how the job ended.
  bool status_unknown = false;
  // Taken back by the system it runs under (Slurm requeued it, or would not
  // start it): it goes back to gleaner's queue, for this reason.
  std::string requeued_for;
};

// What a job left to find it by after a restart.
struct JobHandle {
  sched::JobId id = 0;
  std::optional<int> pid;  // with its start time: the process to adopt
  std::optional<core::TimePoint> process_started_at;
  std::string slurm_job_id;  // a job run through Slurm (bridge mode)
  std::string log_dir;       // the one it was launched with
};

// Starts jobs as their users and ends them: the `Executor` runs them as
// processes of this host, the `SlurmRunner` as Slurm jobs. The `NodeAgent`
// drives either the same way.
class JobRunner {
 public:
  virtual ~JobRunner() = default;

  // Fails with a message naming the cause, leaving nothing behind.
  virtual core::Result<RunningJob> Launch(const LaunchRequest& request) = 0;
  // Takes back a job started before a restart; NotFound when it no longer
  // runs.
  virtual core::Status Adopt(const JobHandle& job) = 0;
  // How a job that ended while no gleaner watched it ended; nullopt when
  // nothing recorded it.
  virtual std::optional<JobExit> EndedWhileAway(const JobHandle& job) = 0;
  // After a restart, once running jobs are taken back: ends what a killed
  // gleaner left running that no job claims.
  virtual void SweepLeftovers() = 0;
  // Collects jobs that ended since the last call; never blocks long.
  virtual std::vector<JobExit> Reap() = 0;
  // Sends `signal` to the job (the checkpoint signal, then SIGKILL after
  // the grace: the caller keeps the time).
  virtual core::Status Signal(sched::JobId id, int signal) = 0;
  // Tells the job's user why it is being ended, where they would read it
  // (an interactive session's terminal); elsewhere the log and the job's
  // reason say it.
  virtual void Tell(sched::JobId /*id*/, const std::string& /*why*/) {}
  virtual const std::map<sched::JobId, RunningJob>& running() const = 0;
  // Why `gpu` may not be lent whatever its verdict (bridge mode: another
  // Slurm job holds it); empty when nothing here forbids it.
  virtual std::string WhyNotLendable(const gpu::GpuSnapshot& /*gpu*/) const { return ""; }
};

}  // namespace gleaner::agent
