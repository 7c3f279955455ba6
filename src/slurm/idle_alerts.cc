#include "slurm/idle_alerts.h"

#include <set>

#include "core/format.h"

namespace gleaner::slurm {

std::string IdleAllocationSummary(const JobOnHost& job, core::TimePoint now,
                                  core::Duration at_least) {
  const SlurmJob& j = job.job;
  std::string who = j.user.empty() ? "unknown user" : j.user;
  if (!j.account.empty()) who += ", account " + j.account;
  if (!j.partition.empty()) who += ", partition " + j.partition;
  std::string out = "Slurm job " + j.DisplayId() + " (" + who + ") holds " +
                    std::to_string(job.gpus.size()) +
                    (job.gpus.size() == 1 ? " GPU here" : " GPUs here");
  const int unused = job.UnusedGpus(now, at_least);
  if (unused > 0) {
    out += ", " + std::to_string(unused) + " unused for " +
           core::FormatDuration(*job.UnusedFor(now, at_least));
  }
  return out;
}

std::set<std::string> IdleAllocationAlerts::Firing() const {
  std::set<std::string> ids;
  for (const auto& [id, event] : firing_) ids.insert(id);
  return ids;
}

std::vector<observe::AlertEvent> IdleAllocationAlerts::Observe(const std::vector<JobOnHost>& jobs,
                                                               core::TimePoint now) {
  std::vector<observe::AlertEvent> events;
  std::set<std::string> still;
  for (const JobOnHost& job : jobs) {
    if (job.UnusedGpus(now, rule_.after) < rule_.min_gpus) continue;
    still.insert(job.job.id);
    if (firing_.count(job.job.id)) continue;
    observe::AlertEvent e;
    e.rule = kIdleAllocationAlert;
    for (const AllocatedGpu& g : job.gpus) {
      if (g.Unused() && !g.uuid.empty()) {
        e.uuid = g.uuid;  // the first unused GPU stands for the job's
        break;
      }
    }
    e.firing = true;
    e.starts_at = now;
    e.severity = rule_.severity;
    e.summary = IdleAllocationSummary(job, now, rule_.after);
    if (!job.job.user.empty()) e.users = {job.job.user};
    e.job = "slurm:" + job.job.id;
    firing_[job.job.id] = e;
    events.push_back(std::move(e));
  }
  for (auto it = firing_.begin(); it != firing_.end();) {
    if (still.count(it->first)) {
      ++it;
      continue;
    }
    observe::AlertEvent resolved = it->second;
    resolved.firing = false;
    resolved.ends_at = now;
    events.push_back(std::move(resolved));
    it = firing_.erase(it);
  }
  return events;
}

}  // namespace gleaner::slurm
