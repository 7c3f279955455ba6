#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/trace_job.h"

namespace gleaner::sim {

// Reader for the job files of Microsoft's ITP clusters (elasticflow-traces):
// a header naming job_id, submission_time, duration and num_gpu (in any
// order; other columns are read past), then one job per row. Times are
// whole seconds from the start of collection.
//
// A row is dirty when it has the wrong number of fields, an empty job_id, a
// job_id seen before, a submission_time that is not an integer >= 0, a
// duration that is not an integer >= 1 or a num_gpu that is not an integer
// from 1 to kMaxItpGpus. Blank lines are skipped silently.
inline constexpr int kMaxItpGpus = 65536;

struct ItpReadOptions {
  // false: the first dirty row is an InvalidArgument naming file:line and
  // what was expected. true: dirty rows are skipped and counted.
  bool skip_bad_rows = false;
  // With skip_bad_rows: how many of the skipped rows' messages to keep.
  int keep_messages = 10;
};

struct ItpTrace {
  std::vector<TraceJob> jobs;  // in file order
  int64_t skipped_rows = 0;
  std::vector<std::string> skipped_messages;  // "file:line: what was wrong", the first few
};

// Parses `in`; `name` is what messages call the file (its path). An empty
// file or a header without the four columns is an InvalidArgument whatever
// the options say, and so is a file with no clean row.
core::Result<ItpTrace> ParseItpJobs(std::istream& in, const std::string& name,
                                    const ItpReadOptions& options);

// ParseItpJobs on a file; NotFound when it cannot be opened.
core::Result<ItpTrace> ReadItpJobs(const std::string& path, const ItpReadOptions& options);

}  // namespace gleaner::sim
