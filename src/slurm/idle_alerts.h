#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/units.h"
#include "observe/alerts.h"
#include "slurm/allocation.h"

namespace gleaner::slurm {

// When a Slurm job's unused GPUs become an alert to its owner.
struct IdleAllocationRule {
  core::Duration after = std::chrono::minutes(30);  // each GPU unused this long
  int min_gpus = 1;                                 // at least this many of them
  std::string severity = "warning";
};

inline constexpr char kIdleAllocationAlert[] = "SlurmJobGpusIdle";

// Turns the jobs on a host into alert events, one firing and one resolved
// per episode and job: "Slurm job 1234 (alice, account physics) holds 4
// GPUs, 3 unused for 2h". The event names the owner (for routing) and the
// job ("slurm:1234"); it is resolved when the job uses its GPUs again or
// is gone. Pure.
class IdleAllocationAlerts {
 public:
  explicit IdleAllocationAlerts(IdleAllocationRule rule) : rule_(std::move(rule)) {}
  std::vector<observe::AlertEvent> Observe(const std::vector<JobOnHost>& jobs, core::TimePoint now);
  // The Slurm job ids whose alert fires now.
  std::set<std::string> Firing() const;

 private:
  IdleAllocationRule rule_;
  std::map<std::string, observe::AlertEvent> firing_;  // by Slurm job id
};

// The alert's one-line summary for `job` at `now`.
std::string IdleAllocationSummary(const JobOnHost& job, core::TimePoint now,
                                  core::Duration at_least = {});

}  // namespace gleaner::slurm
