#pragma once

#include <map>
#include <string>
#include <vector>

#include "slurm/allocation.h"

namespace gleaner::slurm {

// What `gleaner slurm jobs` shows: each Slurm job on this host with its GPU
// time allocated, used and unused since it started, and the same summed by
// user and by account, most unused first.
struct JobReportRow {
  JobOnHost job;
  JobUsage usage;
};
struct UsageGroup {
  std::string key;  // the user or the account ("(none)" when Slurm named none)
  int jobs = 0;
  JobUsage usage;
};
struct JobsReport {
  std::vector<JobReportRow> jobs;  // most unused GPU-hours first
  std::vector<UsageGroup> by_user;
  std::vector<UsageGroup> by_account;
  JobUsage total;
};

JobsReport BuildJobsReport(
    const std::vector<JobOnHost>& jobs,
    const std::map<core::GpuUuid, std::vector<observe::MinuteRollup>>& rollups,
    core::TimePoint now);

}  // namespace gleaner::slurm
