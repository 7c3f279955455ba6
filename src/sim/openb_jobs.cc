#include "sim/openb_jobs.h"

#include <algorithm>
#include <unordered_set>

#include "core/csv.h"
#include "sim/openb_trace.h"
#include "sim/trace_csv.h"
#include "sim/utilization_trace.h"

namespace gleaner::sim {
namespace {

// The openb format's own range: nodes of at most 8 GPUs, pods within one.
constexpr int64_t kMaxPodGpus = 8;
// A century of seconds: far beyond any trace, far from overflow in sums.
constexpr int64_t kMaxSeconds = int64_t{100} * 365 * 24 * 3600;

constexpr const char* kColumns =
    "name, num_gpu, gpu_milli, qos, creation_time, deletion_time, scheduled_time (any order)";

// What one clean row says, before it is classified.
struct Pod {
  int64_t gpus = 0;
  int64_t gpu_milli = 0;
  int priority = 0;
  int64_t created_s = 0;
  std::optional<int64_t> scheduled_s;  // empty: never scheduled
  int64_t deleted_s = 0;
};

// "" when the row is clean, with *pod filled; otherwise what was wrong.
std::string ParsePod(const std::vector<std::string>& f, const std::vector<size_t>& at, Pod* pod) {
  std::string problem;
  if (f[at[0]].empty()) return "column name: expected a pod name, got nothing";
  if (problem = ParseIntField("num_gpu", f[at[1]], 0, kMaxPodGpus, &pod->gpus); !problem.empty()) {
    return problem;
  }
  const int64_t lowest_share = pod->gpus == 0 ? 0 : 1;
  if (problem = ParseIntField("gpu_milli", f[at[2]], lowest_share, 1000, &pod->gpu_milli);
      !problem.empty()) {
    return problem + (pod->gpus > 0 ? " (a pod with GPUs asks for a share of each)" : "");
  }
  if (pod->gpus > 1 && pod->gpu_milli < 1000) {
    return "column gpu_milli: " + std::to_string(pod->gpus) + " GPUs of " +
           std::to_string(pod->gpu_milli) +
           " milli each; expected 1000 (shares below 1000 are only for one GPU)";
  }
  const std::optional<int> priority = OpenbQosPriority(f[at[3]]);
  if (!priority) {
    return "column qos: expected LS, Guaranteed, Burstable or BE, got \"" + f[at[3]] + "\"";
  }
  pod->priority = *priority;
  if (problem = ParseIntField("creation_time", f[at[4]], 0, kMaxSeconds, &pod->created_s);
      !problem.empty()) {
    return problem;
  }
  if (!f[at[6]].empty()) {
    int64_t scheduled_s = 0;
    if (problem =
            ParseIntField("scheduled_time", f[at[6]], pod->created_s, kMaxSeconds, &scheduled_s);
        !problem.empty()) {
      return problem + " (empty for a pod never scheduled; never before its creation_time)";
    }
    pod->scheduled_s = scheduled_s;
  } else if (f[at[5]].empty()) {
    return "";  // never scheduled and never deleted: still pending when the trace ended
  }
  const int64_t earliest = pod->scheduled_s.value_or(pod->created_s);
  if (problem = ParseIntField("deletion_time", f[at[5]], earliest, kMaxSeconds, &pod->deleted_s);
      !problem.empty()) {
    return problem + (pod->scheduled_s ? " (never before its scheduled_time)"
                                       : " (never before its creation_time)");
  }
  return "";
}

}  // namespace

std::optional<int> OpenbQosPriority(std::string_view qos) {
  if (qos == "LS") return 3;
  if (qos == "Guaranteed") return 2;
  if (qos == "Burstable") return 1;
  if (qos == "BE" || qos == "BestEffort") return 0;
  return std::nullopt;
}

core::Result<OpenbJobs> ReadOpenbJobs(const std::string& path, const OpenbJobsOptions& options) {
  GLEANER_ASSIGN_OR_RETURN(core::CsvReader reader,
                           core::CsvReader::Open(path, core::CsvBlanks::kTrim));
  GLEANER_ASSIGN_OR_RETURN(const std::vector<size_t> at,
                           reader.FindColumns({"name", "num_gpu", "gpu_milli", "qos",
                                               "creation_time", "deletion_time", "scheduled_time"},
                                              kColumns));
  // gpu_spec is optional: files without it have no model constraints.
  const std::optional<size_t> spec_at = reader.Find("gpu_spec");
  OpenbJobs out;
  TraceCleaning cleaning;
  DirtyRows dirty(options.skip_bad_rows, &cleaning, &out.skipped_messages);
  std::unordered_set<std::string> seen;
  while (reader.Next()) {
    const std::vector<std::string>& f = reader.fields();
    Pod pod;
    std::string problem;
    if (problem = reader.RowProblem(); !problem.empty()) {
    } else if (problem = ParsePod(f, at, &pod); !problem.empty()) {
    } else if (!seen.emplace(f[at[0]]).second) {
      problem =
          "column name: \"" + f[at[0]] + "\" appeared on an earlier line; expected each pod once";
    }
    if (!problem.empty()) {
      GLEANER_RETURN_IF_ERROR(dirty.Add(path, reader.line(), problem));
      continue;
    }
    if (pod.gpus == 0) {
      ++out.left_out_without_gpus;
      continue;
    }
    if (!pod.scheduled_s) {
      ++out.left_out_never_scheduled;
      continue;
    }
    TraceJob job;
    job.submit_s = pod.created_s;
    job.duration_s = std::max<int64_t>(1, pod.deleted_s - *pod.scheduled_s);
    job.gpus = static_cast<int>(pod.gpus);
    job.priority = pod.priority;
    if (spec_at) job.gpu_models = SplitOpenbGpuSpec(f[*spec_at]);
    out.shared_gpu_jobs += pod.gpu_milli < 1000 ? 1 : 0;
    out.jobs.push_back(job);
  }
  out.skipped_rows = cleaning.bad_rows_skipped;
  if (out.jobs.empty()) {
    return core::InvalidArgument(
        path + ": no pod to replay: " + std::to_string(out.left_out_without_gpus) +
        " without GPUs, " + std::to_string(out.left_out_never_scheduled) + " never scheduled, " +
        std::to_string(out.skipped_rows) +
        " dirty rows skipped; expected at least one pod with num_gpu >= 1 and a scheduled_time");
  }
  return out;
}

}  // namespace gleaner::sim
