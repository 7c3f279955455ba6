#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/units.h"
#include "sim/trace_job.h"

namespace gleaner::sim {

// A job of the opportunistic queue of a harvest scenario: it asks for
// `gpus` GPUs on one node for `work_s` seconds of running, and may be
// preempted whenever an owner comes back.
struct HarvestJob {
  int64_t submit_s = 0;  // on the owner timeline's clock
  int64_t work_s = 1;
  int gpus = 1;
  std::string user;
  // The GPU memory it declared it uses on each GPU; zero: not said (it
  // needs whole GPUs).
  core::Bytes gpu_memory;
};

// A seeded stream of the work people queue for spare GPUs: hyperparameter
// sweeps (8-64 one-GPU trials of 10 minutes to 2 hours, submitted
// together) and single jobs (1, 2, 4 or 8 GPUs, 5 minutes to 4 hours, log-
// uniform), from 12 users of Zipf-distributed appetite. Jobs are drawn until
// they ask for `offered_gpu_s` GPU-seconds and arrive at uniform random
// times in the first 90 % of [start_s, end_s), so that most can finish.
// The same options give the same jobs on every platform.
struct SyntheticQueueOptions {
  uint64_t seed = 0;
  int64_t start_s = 0;
  int64_t end_s = 0;
  double offered_gpu_s = 0;
  int max_gpus = 8;  // no job asks for more (the largest node)
  // Each job declares the GPU memory it uses (drawn apart from the rest, so
  // the other draws stay as they were): a sweep's trials 2-24 GiB, others
  // 4 GiB up to this, log-uniform in whole GiB.
  core::Bytes max_gpu_memory = core::Bytes::GiB(80);
};
std::vector<HarvestJob> SyntheticQueue(const SyntheticQueueOptions& options);

// An ITP job trace as the opportunistic queue: arrivals shifted to start
// at `start_s`; jobs larger than `max_gpus` (a node) or arriving at or after
// `end_s` are left out and counted. ITP rows name no user: all are "itp".
struct QueueFromTrace {
  std::vector<HarvestJob> jobs;
  int64_t too_large = 0;
  int64_t too_late = 0;
};
QueueFromTrace QueueFromTraceJobs(const std::vector<TraceJob>& trace, int64_t start_s,
                                  int64_t end_s, int max_gpus);

}  // namespace gleaner::sim
