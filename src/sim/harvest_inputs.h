#pragma once

// What a harvest replay (`gleaner sim harvest`) runs on: the owners'
// workload from one public trace, and the queue of jobs that borrow their
// idle GPUs, from an ITP job trace or the synthetic generator.

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/units.h"
#include "sim/harvest_queue.h"
#include "sim/owner_timeline.h"

namespace gleaner::sim {

// The owners' trace: exactly one of genai, helios and philly.
struct OwnerTraceFiles {
  std::string genai;            // Alibaba GenAI duty-cycle CSV
  std::string genai_memory;     // its memory CSV
  std::string helios;           // a Helios VC CSV, or a folder of them
  std::string philly;           // Philly node sequence
  std::string philly_machines;  // default: cluster_machine_list beside it
  int gpus_per_node = 8;
  bool skip_bad_rows = false;
};

struct OwnerWorkload {
  OwnerTimeline timeline;
  std::string kind;   // genai, helios or philly
  std::string trace;  // the file's or folder's own name
  int64_t skipped_rows = 0;
  std::vector<std::string> skipped;  // what was skipped, one message each
};

// InvalidArgument when no trace is named; the readers' errors otherwise.
core::Result<OwnerWorkload> LoadOwnerWorkload(const OwnerTraceFiles& files);

struct HarvestQueueSource {
  std::string itp;    // an ITP job file; empty: the synthetic generator
  double load = 1.0;  // the synthetic queue offers load x the idle GPU-seconds
  uint64_t seed = 0;
  bool skip_bad_rows = false;
};

struct HarvestQueue {
  std::vector<HarvestJob> jobs;
  std::string source;  // the ITP file's name, or "synthetic"
  double offered_gpu_hours = 0;
  int64_t too_large = 0;  // ITP jobs larger than any node, left out
  int64_t too_late = 0;   // ITP jobs after the owners' trace ends, left out
  std::vector<std::string> skipped;
};

// The queue over `owner`'s span, its jobs at most a node's GPUs and
// `gpu_memory`.
core::Result<HarvestQueue> LoadHarvestQueue(const HarvestQueueSource& source,
                                            const OwnerTimeline& owner, double idle_gpu_s,
                                            core::Bytes gpu_memory);

}  // namespace gleaner::sim
