#include "sim/itp_trace.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <string_view>
#include <unordered_set>

#include "sim/trace_csv.h"

namespace gleaner::sim {
namespace {

// Unlike SplitCsvFields, blanks around a field are kept: an ITP field with
// blanks is dirty.
std::vector<std::string_view> Split(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    std::string_view f =
        line.substr(start, comma == std::string_view::npos ? comma : comma - start);
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
    out.push_back(f);
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

constexpr std::array<std::string_view, 4> kColumns = {"job_id", "submission_time", "duration",
                                                      "num_gpu"};
// A century of seconds: far beyond any trace, far from overflow in sums.
constexpr int64_t kMaxSeconds = int64_t{100} * 365 * 24 * 3600;

}  // namespace

core::Result<ItpTrace> ParseItpJobs(std::istream& in, const std::string& name,
                                    const ItpReadOptions& options) {
  std::string line;
  if (!std::getline(in, line)) {
    return core::InvalidArgument(name +
                                 ":1: the file is empty; expected the header "
                                 "job_id,submission_time,duration,num_gpu");
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string_view> header = Split(line);
  std::array<size_t, 4> at{};
  for (size_t c = 0; c < kColumns.size(); ++c) {
    const auto it = std::find(header.begin(), header.end(), kColumns[c]);
    if (it == header.end()) {
      return core::InvalidArgument(
          name + ":1: the header has no column \"" + std::string(kColumns[c]) +
          "\"; expected job_id,submission_time,duration,num_gpu, got \"" + line + "\"");
    }
    at[c] = static_cast<size_t>(it - header.begin());
  }
  const size_t width = header.size();

  ItpTrace trace;
  std::unordered_set<std::string> seen;
  int64_t line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const std::vector<std::string_view> f = Split(line);
    std::string problem;
    TraceJob job;
    int64_t gpus = 0;
    if (f.size() != width) {
      problem = "expected " + std::to_string(width) +
                " comma-separated fields as in the header, got " + std::to_string(f.size());
    } else if (f[at[0]].empty()) {
      problem = "column job_id: expected a job id, got nothing";
    } else if (problem = ParseIntField("submission_time", f[at[1]], 0, kMaxSeconds, &job.submit_s);
               !problem.empty()) {
    } else if (problem = ParseIntField("duration", f[at[2]], 1, kMaxSeconds, &job.duration_s);
               !problem.empty()) {
    } else if (problem = ParseIntField("num_gpu", f[at[3]], 1, kMaxItpGpus, &gpus);
               !problem.empty()) {
    } else if (!seen.emplace(f[at[0]]).second) {
      problem = "column job_id: \"" + std::string(f[at[0]]) +
                "\" appeared on an earlier line; expected each job once";
    }
    if (!problem.empty()) {
      const std::string message = name + ":" + std::to_string(line_no) + ": " + problem;
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
