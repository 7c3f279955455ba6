#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "agent/job_runner.h"
#include "agent/run_program.h"
#include "core/clock.h"
#include "slurm/slurm_json.h"
#include "slurm/slurm_settings.h"

namespace gleaner::agent {

// How gleaner runs Slurm's commands: within `[slurm] timeout_s`, with its
// `conf` as SLURM_CONF.
ProgramOptions SlurmCommandOptions(const slurm::SlurmSettings& settings);

// Asks Slurm for its jobs (squeue --json, or slurmrestd).
using FetchSlurmJobs = std::function<core::Result<slurm::SlurmJobsDocument>()>;

// Bridge mode's runner: each job gleaner places on this host runs as a
// Slurm job, submitted with sbatch as its user (Slurm authenticates the
// user itself, through munge) into the configured preemptible partition,
// pinned to this node with as many GPUs (--gres) as gleaner gave it; Slurm
// chooses which of the node's free GPUs. Nothing runs outside Slurm: the
// checkpoint signal and the stop go through scancel, and a job Slurm
// requeues (a higher-tier job wanted its GPUs), or does not start soon, is
// reported as vacated and taken out of Slurm's queue, so gleaner places it
// again when it judges GPUs idle. Its jobs are named gleaner-<id> and carry a comment naming
// this node, by which a restarted gleaner finds them. Not thread-safe.
class SlurmRunner final : public JobRunner {
 public:
  SlurmRunner(slurm::SlurmSettings settings, std::string node, FetchSlurmJobs fetch,
              const core::Clock& clock);

  core::Result<RunningJob> Launch(const LaunchRequest& request) override;
  core::Status Adopt(const JobHandle& job) override;
  std::optional<JobExit> EndedWhileAway(const JobHandle& job) override;
  void SweepLeftovers() override;
  std::vector<JobExit> Reap() override;
  core::Status Signal(sched::JobId id, int signal) override;
  const std::map<sched::JobId, RunningJob>& running() const override { return running_; }

  // A GPU another Slurm job holds (by GRES index, which is the driver's
  // index where gres.conf lists /dev/nvidia0..N in order) is not lent, nor
  // any while Slurm does not answer.
  std::string WhyNotLendable(const gpu::GpuSnapshot& gpu) const override;

  // The comment on every job this runner submits.
  std::string Tag() const { return "gleaner-bridge node=" + node_; }

 private:
  core::Result<RunningJob> Submit(const LaunchRequest& request);
  // Reads Slurm's jobs again when the last read is older than the poll
  // interval (or `now`); false when Slurm did not answer.
  bool Poll(bool now);
  const slurm::SlurmJob* Find(const std::string& slurm_id) const;
  // How a job Slurm no longer runs ended; nullopt while it is still
  // Slurm's to run.
  std::optional<JobExit> Ended(sched::JobId id, const slurm::SlurmJob& job) const;
  core::Status Cancel(const std::string& slurm_id, std::optional<int> signal);
  // Cancels the Slurm jobs tagged for this node that no running job claims.
  void CancelUnclaimed();
  // How long Slurm's own jobs are given to take GPUs it preempted a gleaner
  // job for, during which nothing here is lent; also how long a submitted
  // job may wait in Slurm before it is taken back.
  core::Duration Settle() const;

  slurm::SlurmSettings settings_;
  std::string node_;
  FetchSlurmJobs fetch_;
  const core::Clock& clock_;
  std::map<sched::JobId, RunningJob> running_;
  std::optional<slurm::SlurmJobsDocument> jobs_;  // Slurm's, as last read
  std::optional<core::TimePoint> polled_at_;
  std::string poll_error_;
  std::set<sched::JobId> started_;  // seen running in Slurm
  std::optional<core::TimePoint> settle_until_;
};

}  // namespace gleaner::agent
