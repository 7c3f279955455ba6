#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/units.h"
#include "sched/job_spec.h"

namespace gleaner::sched {

// A lent GPU that must be given back now, and why ("owner returned:
// process 4242 of bob ...", "protected user", "GPU lost").
struct GpuClaim {
  core::GpuUuid uuid;
  std::string reason;
};

// A job running on lent GPUs.
struct RunningOnGpus {
  JobId id = 0;
  std::vector<core::GpuUuid> gpus;
  int checkpoint_signal = 15;
  core::Duration grace{};
};

struct VacateAction {
  enum class Kind {
    kCheckpoint,  // send `signal` to the job's process group now
    kKill,        // the grace is over: SIGKILL the process group
  };
  Kind kind = Kind::kCheckpoint;
  JobId job = 0;
  int signal = 15;
  std::string reason;
};

// Decides when jobs on reclaimed GPUs get their checkpoint signal and when
// they are killed: the checkpoint at once when any of a job's GPUs is
// claimed, SIGKILL when its grace has passed. Each action is issued once.
// The caller requeues a job when its process is gone (and calls Forget).
// Pure: time is passed in; deterministic.
class VacatePlanner {
 public:
  std::vector<VacateAction> Plan(const std::vector<RunningOnGpus>& running,
                                 const std::map<core::GpuUuid, GpuClaim>& claims,
                                 core::TimePoint now);

  bool IsVacating(JobId job) const { return vacating_.contains(job); }
  // Why `job` was asked to leave (empty if it was not).
  std::string Reason(JobId job) const;
  // When the checkpoint signal went out.
  std::optional<core::TimePoint> Since(JobId job) const;
  // The job's processes are gone: stop tracking it.
  void Forget(JobId job) { vacating_.erase(job); }

 private:
  struct Vacating {
    core::TimePoint since;
    core::TimePoint kill_at;
    std::string reason;
    bool killed = false;
  };
  std::map<JobId, Vacating> vacating_;
};

}  // namespace gleaner::sched
