#include "slurm/idle_actions.h"

#include <algorithm>

#include "core/format.h"

namespace gleaner::slurm {

std::string_view IdleActionName(IdleAction action) {
  switch (action) {
    case IdleAction::kRequeue:
      return "requeue";
    case IdleAction::kCancel:
      return "cancel";
    case IdleAction::kNone:
      break;
  }
  return "none";
}

std::vector<PlannedIdleAction> IdleAllocationActions::Decide(const std::vector<JobOnHost>& jobs,
                                                             core::TimePoint now,
                                                             const std::set<std::string>& alerted,
                                                             const std::set<std::string>& exempt) {
  std::vector<PlannedIdleAction> out;
  if (rule_.action == IdleAction::kNone) return out;
  std::set<std::string> present;
  for (const JobOnHost& seen : jobs) {
    const std::string key = seen.job.id + "/" + std::to_string(seen.job.restart_count);
    present.insert(key);
    const core::TimePoint first = first_seen_.try_emplace(key, now).first->second;
    // This run holds the GPU from its start, and at the latest from when it
    // was first seen: Slurm's start time may be missing or the last run's.
    JobOnHost job = seen;
    job.job.start_time = job.job.start_time ? std::max(*job.job.start_time, first) : first;
    const int here = static_cast<int>(job.gpus.size());
    if (here == 0 || job.job.gpu_count > here || acted_.contains(key) ||
        exempt.contains(job.job.id) || !alerted.contains(job.job.id) ||
        job.UnusedGpus(now, rule_.after) < here) {
      continue;
    }
    acted_.insert(key);
    const std::optional<core::Duration> unused = job.UnusedFor(now, rule_.after);
    out.push_back({job, rule_.action,
                   (here == 1 ? std::string("its GPU") : "all " + std::to_string(here) + " GPUs") +
                       " unused for " + core::FormatDuration(unused.value_or(rule_.after)) +
                       " (after " + core::FormatDuration(rule_.after) + ")"});
  }
  // Forget jobs gone from Slurm's list, so the maps stay small.
  std::erase_if(acted_, [&](const std::string& k) { return !present.contains(k); });
  std::erase_if(first_seen_, [&](const auto& entry) { return !present.contains(entry.first); });
  return out;
}

}  // namespace gleaner::slurm
