#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "sched/dependencies.h"
#include "sched/job_spec.h"

namespace gleaner::cli {

// One job of a DAG file (`gleaner submit --dag FILE`, docs/jobs.md), with
// the jobs it waits for by name: ids exist only once those are submitted.
struct DagJob {
  std::string group;    // its name in the file (a sweep's jobs share it)
  sched::JobSpec spec;  // spec.name set; no dependency by id yet
  std::vector<std::pair<sched::DependencyKind, std::string>> after;
};

// Reads a DAG file: `[defaults]` (fields every job gets) and `[[job]]`
// tables, each a job spec as the API takes it (docs/jobs.md) with a unique
// `name`, `after`, `after_any` and `after_failure` as lists of names, and
// `sweep`: a table of parameter lists whose every combination is a job of
// its own ("train[bs=32,lr=0.001]", parameters in name order), each value in the environment under
// its parameter's name and in place of `{name}` in the command. A name
// that a sweep expanded stands for all its jobs. Returns the jobs in an
// order where each comes after those it names. Every error (TOML, a field,
// an unknown or repeated name, a cycle) names the file and the job; nothing
// is half-read.
core::Result<std::vector<DagJob>> ParseDagFile(std::string_view text, const std::string& path);

// The most jobs one file may expand to.
inline constexpr size_t kMaxDagJobs = 10'000;

}  // namespace gleaner::cli
