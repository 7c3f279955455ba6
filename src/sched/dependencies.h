#pragma once

#include <string_view>
#include <vector>

#include "core/status.h"
#include "sched/job_spec.h"

namespace gleaner::sched {

// Dependencies between jobs, with the meanings of Slurm's sbatch
// --dependency, kept in the spec's three lists:
//   afterok     start once the job succeeded            (after_success)
//   afterany    start once the job ended, however       (after_any)
//   afternotok  start once the job failed or was cancelled (after_failure)
// A dependency that can no longer be met (afterok on a job that failed,
// afternotok on one that succeeded, any on a job that does not exist)
// cancels the job that waits, with the reason.
enum class DependencyKind { kAfterOk, kAfterAny, kAfterNotOk };

struct Dependency {
  DependencyKind kind;
  JobId job;
};

std::string_view DependencyKindName(DependencyKind kind);

// Every dependency of `spec`, in the order afterok, afterany, afternotok.
std::vector<Dependency> DependenciesOf(const JobSpec& spec);

// Adds Slurm's form, "afterok:3:4,afterany:5,singleton", to the spec's
// lists (singleton: JobSpec::singleton). Slurm's "?" (any one of several)
// and kinds gleaner lacks are refused, with why.
core::Status AddDependencies(std::string_view text, JobSpec* spec);

}  // namespace gleaner::sched
