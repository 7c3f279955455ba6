#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/units.h"
#include "observe/verdict.h"

namespace gleaner::observe {

// A process seen on a GPU, attributed.
struct ObservedProcess {
  uint32_t pid = 0;
  std::string user;          // empty when unknown
  std::string command;       // empty when unknown
  core::Bytes used_memory;   // zero when the driver cannot say
  bool gleaner_job = false;  // started by gleaner (a harvested job)
  // Its own utilization (SM share), where the driver reports it per process.
  std::optional<double> utilization_pct;
  // When it started (from /proc): pids are reused, start times are not.
  std::optional<core::TimePoint> started_at;

  bool operator==(const ObservedProcess&) const = default;
};

// A job lent a GPU beside the processes that held it (co-location): what
// the loan was sized on, which the holder must stay within.
struct LoanBesideHolder {
  std::vector<uint32_t> holder_pids;  // sorted
  core::Bytes holder_peak;            // the holder's learned peak when lent
  core::Bytes declared;               // the job's declared memory

  bool operator==(const LoanBesideHolder&) const = default;
};

// One reading of one GPU: what the classifier sees. Optional fields are
// absent when the GPU or driver cannot read them (never zero-filled).
struct GpuSample {
  core::TimePoint at;
  core::GpuUuid uuid;
  bool healthy = true;        // false: lost, or not attachable
  std::string health_detail;  // why not healthy
  std::optional<double> utilization_pct;
  std::optional<core::Bytes> memory_used;
  std::optional<core::Bytes> memory_total;
  std::optional<double> power_w;
  std::optional<double> power_limit_w;
  std::optional<int32_t> temperature_c;
  bool processes_known = false;  // false: the process list could not be read
  std::vector<ObservedProcess> processes;
  // gleaner lent the GPU to this job, which runs now: known to the agent
  // whether or not the job's process shows on the GPU (one that opened no
  // CUDA context yet does not).
  std::optional<int64_t> lent_to_job;
  std::string lent_to_user;  // that job's user, where known
  // Set when that job was lent the GPU beside its holder.
  std::optional<LoanBesideHolder> beside_holder;
  // Its holder told it will be parked, parked, or being restored (the
  // agent's word: a parked process is not on the GPU to be seen).
  std::optional<HolderParking> parking;
};

}  // namespace gleaner::observe
