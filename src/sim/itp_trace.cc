#include "sim/itp_trace.h"

#include <fstream>
#include <string_view>
#include <unordered_set>

#include "core/csv.h"
#include "sim/trace_csv.h"

namespace gleaner::sim {
namespace {

// A century of seconds: far beyond any trace, far from overflow in sums.
constexpr int64_t kMaxSeconds = int64_t{100} * 365 * 24 * 3600;

}  // namespace

core::Result<ItpTrace> ParseItpJobs(std::istream& in, const std::string& name,
                                    const ItpReadOptions& options) {
  // Blanks around a field are kept: an ITP field with blanks is dirty.
  GLEANER_ASSIGN_OR_RETURN(core::CsvReader reader,
                           core::CsvReader::Over(in, name, core::CsvBlanks::kKeep));
  GLEANER_ASSIGN_OR_RETURN(const std::vector<size_t> at,
                           reader.FindColumns({"job_id", "submission_time", "duration", "num_gpu"},
                                              "job_id,submission_time,duration,num_gpu"));
  ItpTrace trace;
  std::unordered_set<std::string> seen;
  while (reader.Next()) {
    const std::vector<std::string>& f = reader.fields();
    TraceJob job;
    int64_t gpus = 0;
    std::string problem;
    if (problem = reader.RowProblem(); !problem.empty()) {
    } else if (f[at[0]].empty()) {
      problem = "column job_id: expected a job id, got nothing";
    } else if (problem = ParseIntField("submission_time", f[at[1]], 0, kMaxSeconds, &job.submit_s);
               !problem.empty()) {
    } else if (problem = ParseIntField("duration", f[at[2]], 1, kMaxSeconds, &job.duration_s);
               !problem.empty()) {
    } else if (problem = ParseIntField("num_gpu", f[at[3]], 1, kMaxItpGpus, &gpus);
               !problem.empty()) {
    } else if (!seen.emplace(f[at[0]]).second) {
      problem =
          "column job_id: \"" + f[at[0]] + "\" appeared on an earlier line; expected each job once";
    }
    if (!problem.empty()) {
      const std::string message = reader.At(problem);
      if (!options.skip_bad_rows) {
        return core::InvalidArgument(message + " (--skip-bad-rows skips such rows)");
      }
      ++trace.skipped_rows;
      if (static_cast<int>(trace.skipped_messages.size()) < options.keep_messages) {
        trace.skipped_messages.push_back(message);
      }
      continue;
    }
    job.gpus = static_cast<int>(gpus);
    trace.jobs.push_back(job);
  }
  if (trace.jobs.empty()) {
    return core::InvalidArgument(
        name + ": no job rows" +
        (trace.skipped_rows > 0
             ? " left after skipping " + std::to_string(trace.skipped_rows) + " dirty ones"
             : std::string()) +
        "; expected at least one row job_id,submission_time,duration,"
        "num_gpu after the header");
  }
  return trace;
}

core::Result<ItpTrace> ReadItpJobs(const std::string& path, const ItpReadOptions& options) {
  std::ifstream in(path);
  if (!in) return core::NotFound("cannot open " + path + "; check the path");
  return ParseItpJobs(in, path, options);
}

}  // namespace gleaner::sim
