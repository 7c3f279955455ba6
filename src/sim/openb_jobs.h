#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sim/trace_job.h"

namespace gleaner::sim {

// The pods of Alibaba's openb trace (openb_pod_list_*.csv, read for the
// fragmentation experiment by openb_trace.h) as a job stream for a plain
// replay. The header names the columns, in any order: name, num_gpu,
// gpu_milli, qos, creation_time, deletion_time and scheduled_time (others,
// such as cpu_milli or pod_phase, are read past). Times are whole seconds
// from the start of the trace.
//
// Each pod that asked for GPUs and was scheduled becomes one TraceJob:
//  - submit_s = creation_time;
//  - duration_s = deletion_time - scheduled_time, at least 1 (the time it
//    held its GPUs; the trace's own wait, scheduled - creation, is what the
//    replay recomputes under its policy);
//  - gpus = num_gpu; a share of one GPU (gpu_milli < 1000) takes one whole
//    GPU, since a plain replay does not share GPUs;
//  - priority from qos (OpenbQosPriority);
//  - gpu_models from gpu_spec where the file has that column
//    ("V100M16|V100M32"; empty or "nan": any model).
// Two kinds of pod are left out and counted, not treated as dirt: pods
// without GPUs (num_gpu 0), which a GPU replay has nothing to place, and
// pods never scheduled (an empty scheduled_time; the trace ended with them
// pending), which have no duration. A pod that is both counts as without
// GPUs.
//
// A row is dirty when it has the wrong number of fields, an empty name or
// one seen on an earlier line, num_gpu not an integer 0-8, gpu_milli not an
// integer 0-1000 (1-1000 for a GPU pod; below 1000 only for one GPU), an
// unknown qos, creation_time not an integer >= 0, scheduled_time neither
// empty nor an integer >= creation_time, deletion_time not an integer
// >= scheduled_time (or >= creation_time for a pod never scheduled, which
// may also leave it empty). Blank lines are skipped silently.
struct OpenbJobsOptions {
  // false: the first dirty row is an InvalidArgument naming file:line and
  // what was expected. true: dirty rows are skipped and counted.
  bool skip_bad_rows = false;
};

struct OpenbJobs {
  std::vector<TraceJob> jobs;  // in file order
  int64_t skipped_rows = 0;
  std::vector<std::string> skipped_messages;  // "file:line: what was wrong", the first ten
  int64_t left_out_without_gpus = 0;
  int64_t left_out_never_scheduled = 0;
  int64_t shared_gpu_jobs = 0;  // jobs from pods asking for a share of one GPU
};

// The replay priority of a Kubernetes QoS class as the trace spells it,
// higher first: LS (latency-sensitive, online serving) 3, Guaranteed 2,
// Burstable 1, BE (best effort; "BestEffort" too) 0. Nothing for any other
// text. Why this order: docs/simulator.md, "The openb job stream".
std::optional<int> OpenbQosPriority(std::string_view qos);

// NotFound when the file cannot be opened; InvalidArgument for an empty
// file, a header missing a column, the first dirty row (unless skipping) or
// a file left with no job (every pod left out or dirty).
core::Result<OpenbJobs> ReadOpenbJobs(const std::string& path, const OpenbJobsOptions& options);

}  // namespace gleaner::sim
