#pragma once

#include <string>
#include <vector>

#include "core/ids.h"
#include "core/units.h"
#include "sched/job_spec.h"

namespace gleaner::sched {

// A GPU that may be lent now (its verdict is Idle).
struct FreeGpu {
  core::GpuUuid uuid;
  std::string model;  // NVML's name, "NVIDIA A100-SXM4-80GB"
  core::Bytes memory_total;
};

// A job waiting to run; dependencies are the caller's to check.
struct QueuedJob {
  JobId id = 0;
  JobSpec spec;
  core::TimePoint submitted_at;
};

struct Placement {
  JobId job = 0;
  std::vector<core::GpuUuid> gpus;
};

// The placement the harvesting daemon starts with, until the scheduler
// (priorities with aging, fair share, reservations, topology, backfill)
// replaces it: jobs in order of priority class, then priority, then age;
// each takes the smallest adequate free GPUs (memory at least its minimum,
// model among its allowed ones), keeping large GPUs for jobs that need
// them; a job that does not fit now is skipped, not waited for. All on one
// host. Pure and deterministic.
std::vector<Placement> PlaceJobs(std::vector<QueuedJob> queue, std::vector<FreeGpu> free);

// Why a job PlaceJobs did not place waits, in words, given the GPUs that
// were free for it: "needs 2 GPUs of at least 40.0 GiB, model A100; 3 are
// idle, 1 of them fits".
std::string WhyWaiting(const JobSpec& spec, const std::vector<FreeGpu>& free);

// Whether `gpu` satisfies the job's memory and model constraints.
bool Fits(const JobSpec& spec, const FreeGpu& gpu);

}  // namespace gleaner::sched
