#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/utilization_trace.h"

namespace gleaner::sim {

// Reader for the per-minute virtual-cluster (VC) files of SenseTime's
// Helios "Earth" cluster (HeliosArtifact, data/Earth/vc*.csv): a header
// naming at least time, total_gpu_num, running_gpu_num, pending_gpu_num,
// idle_gpu_num, running_job_num, pending_job_num, pending_gpu_num_noless_8
// and pending_gpu_num_less_8, in any order (other columns, such as the
// float gpu_utilization, are read past), then one row per minute.
//
// A row is dirty, and an error naming FILE:LINE and what was expected, when:
// its field count differs from the header's; its time is not a valid
// `YYYY-MM-DD HH:MM:SS`; a count it reads is not an integer from 0 to
// kMaxHeliosCount; running or idle GPUs exceed the total, or together do;
// or pending GPUs of large or of small jobs exceed all pending GPUs.
// With skip_bad_rows such rows are skipped and counted instead.
//
// Accepted as they are: gaps between minutes (a consumer aligning VCs
// sees the minute missing); running + idle below the total (GPUs neither
// busy nor offered, e.g. down); pending GPUs in a VC that also has idle
// ones (jobs waiting for a shape the idle GPUs do not make); a pending
// large + small split that does not add up to pending_gpu_num (it does on
// every row of the shared files, but the running split, which is not read,
// does not on 2,602 of them, so only each part is checked against the
// whole). A row whose time is at or before the previous kept row's is a
// duplicate: counted in cleaning.duplicate_times, the first kept. Blank
// lines are skipped silently.
inline constexpr int64_t kMaxHeliosCount = 10'000'000;

struct HeliosMinute {
  int64_t t_s = 0;  // seconds since 1970-01-01 00:00:00 of the written time (treated as UTC)
  int32_t total_gpus = 0, running_gpus = 0, pending_gpus = 0, idle_gpus = 0;
  int32_t running_jobs = 0, pending_jobs = 0;
  int32_t pending_gpus_large = 0, pending_gpus_small = 0;  // jobs of >= 8 GPUs / < 8
};

struct HeliosVc {
  std::string name;                           // file stem, e.g. "vc3sl"
  std::vector<HeliosMinute> minutes;          // strictly increasing t_s
  TraceCleaning cleaning;                     // rows, duplicate_times, bad_rows_skipped
  std::vector<std::string> skipped_messages;  // the first 10 "FILE:LINE: why"
};

struct HeliosReadOptions {
  bool skip_bad_rows = false;
};

// Reads one VC file. NotFound when it cannot be opened; InvalidArgument for
// an empty file, a header missing a column, the first dirty row (unless
// skipping) or a file left with no clean row.
core::Result<HeliosVc> ReadHeliosVc(const std::string& path, const HeliosReadOptions& options);

// Every vc*.csv in `dir`, sorted by name; an error if there is none.
// NotFound when `dir` is not a directory or holds no vc*.csv; otherwise
// the first file's error.
core::Result<std::vector<HeliosVc>> ReadHeliosDir(const std::string& dir,
                                                  const HeliosReadOptions& options);

}  // namespace gleaner::sim
