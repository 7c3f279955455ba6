#pragma once

// Words the Scheduler's files share in what they tell people.
#include <string>

#include "sched/scheduler.h"

namespace gleaner::sched {

inline std::string JobWord(JobId id) { return "job " + std::to_string(id); }

// Where a job's GPUs must be, after DescribeNeed.
inline std::string Where(const JobRequest& req) {
  if (req.spans_nodes()) return " on each of " + std::to_string(req.nodes) + " nodes";
  return req.gpus > 1 ? " on one node" : "";
}

inline std::string ProjectName(const std::string& p) { return p.empty() ? "(none)" : p; }

inline std::string ReservationWords(const Reservation& r) {
  return "reserved for project " + r.project + " (reservation " + r.name + ")";
}

}  // namespace gleaner::sched
