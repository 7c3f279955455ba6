#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "agent/slurm_runner.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "core/result.h"
#include "slurm/slurm_json.h"
#include "slurm/slurm_settings.h"
#include "store/event_store.h"

namespace gleaner::daemon {

// This host's name in Slurm: `[slurm] node`, else the short hostname.
std::string SlurmNodeName(const slurm::SlurmSettings& settings);

// Slurm's jobs now: from slurmrestd when `[slurm] slurmrestd` is set
// (with the token in `token_file`), else from `squeue --json`. Errors say
// what failed and what to do (a refused token: how to renew it).
core::Result<slurm::SlurmJobsDocument> FetchSlurmJobs(const slurm::SlurmSettings& settings);

// Carries out `action` through Slurm (`scontrol requeue ID` or `scancel
// ID`), logs it and records it in the history (`slurm_requeued`,
// `slurm_cancelled`; a failure as `slurm_action_failed`).
void ActOnSlurmIdleJob(const slurm::SlurmSettings& settings, const slurm::PlannedIdleAction& action,
                       store::EventStore& history, core::TimePoint now,
                       const std::function<void(const std::string&)>& log);

// Bridge mode's runner when `[slurm] enabled` and `bridge` are set: jobs
// then run as Slurm jobs; null otherwise.
std::unique_ptr<agent::SlurmRunner> MakeBridgeRunner(const slurm::SlurmSettings& settings,
                                                     const core::Clock& clock);

// Asks Slurm every poll interval on a thread of its own, so a slow
// slurmctld never holds up sampling, and keeps the latest answer.
class SlurmPoller {
 public:
  struct Latest {
    std::optional<slurm::SlurmJobsDocument> jobs;  // the last good answer
    core::TimePoint at{};                          // when it came
    std::string error;                             // the last call's failure, if it failed
  };

  SlurmPoller(slurm::SlurmSettings settings, const core::Clock& clock);
  ~SlurmPoller();  // stops the thread
  SlurmPoller(const SlurmPoller&) = delete;
  SlurmPoller& operator=(const SlurmPoller&) = delete;

  Latest latest() const;
  const slurm::SlurmSettings& settings() const { return settings_; }
  const std::string& node() const { return node_; }

 private:
  void Run() GLEANER_EXCLUDES(mu_);

  const slurm::SlurmSettings settings_;
  const std::string node_;
  const core::Clock& clock_;
  mutable core::Mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ GLEANER_GUARDED_BY(mu_) = false;
  Latest latest_ GLEANER_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace gleaner::daemon
