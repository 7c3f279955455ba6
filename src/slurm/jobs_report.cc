#include "slurm/jobs_report.h"

#include <algorithm>

namespace gleaner::slurm {
namespace {

std::vector<UsageGroup> Grouped(const std::vector<JobReportRow>& rows,
                                const std::string SlurmJob::*field) {
  std::map<std::string, UsageGroup> groups;
  for (const JobReportRow& row : rows) {
    const std::string& key = row.job.job.*field;
    UsageGroup& g = groups[key.empty() ? "(none)" : key];
    g.key = key.empty() ? "(none)" : key;
    ++g.jobs;
    g.usage += row.usage;
  }
  std::vector<UsageGroup> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const UsageGroup& a, const UsageGroup& b) {
    return a.usage.UnusedGpuHours() > b.usage.UnusedGpuHours();
  });
  return out;
}

}  // namespace

JobsReport BuildJobsReport(
    const std::vector<JobOnHost>& jobs,
    const std::map<core::GpuUuid, std::vector<observe::MinuteRollup>>& rollups,
    core::TimePoint now) {
  JobsReport report;
  for (const JobOnHost& job : jobs) {
    report.jobs.push_back({job, UsageOf(job, rollups, now)});
    report.total += report.jobs.back().usage;
  }
  std::stable_sort(report.jobs.begin(), report.jobs.end(),
                   [](const JobReportRow& a, const JobReportRow& b) {
                     return a.usage.UnusedGpuHours() > b.usage.UnusedGpuHours();
                   });
  report.by_user = Grouped(report.jobs, &SlurmJob::user);
  report.by_account = Grouped(report.jobs, &SlurmJob::account);
  return report;
}

}  // namespace gleaner::slurm
