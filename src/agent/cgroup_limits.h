#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "core/units.h"

namespace gleaner::agent {

// A job's host CPUs (thousandths) and memory, as it asked; zero: no limit.
struct HostShare {
  int64_t cpu_milli = 0;
  core::Bytes memory = {};
};

// Holds jobs to the CPUs and memory they asked for (docs/jobs.md, "CPUs
// and memory"), each controller where the host has it:
//  - cgroup v2: cpu.max and memory.max (swap off: memory.swap.max 0) in the
//    job's own cgroup, once the cpu and memory controllers are enabled down
//    to the jobs' base;
//  - else cgroup v1 (a hybrid host): a directory named like the job's v2
//    cgroup under this process's cgroup in the cpu and memory hierarchies,
//    with cpu.cfs_quota_us and memory.limit_in_bytes (and
//    memory.memsw.limit_in_bytes, swap included, where swap is accounted).
// A controller found nowhere is not enforced, and Describe says why.
class CgroupLimits {
 public:
  // Where limits can be set for jobs whose v2 cgroups go under `v2_base`
  // (JobCgroups::base()). With `enable`, turns the v2 controllers on for
  // the base, which needs the cgroup above it to hold no process (the
  // daemon in a leaf beside the base, or in the root cgroup). Without
  // `enable` nothing is changed (gleaner doctor).
  static CgroupLimits Find(const std::string& v2_base, bool enable);

  // Sets `share` for the job whose v2 cgroup is `job_cgroup` (made, empty).
  // The cgroup.procs files the job's first process must join besides its v2
  // cgroup's (the v1 directories it made). A limit that cannot be set fails
  // with the reason, and leaves no v1 directory behind.
  core::Result<std::vector<std::string>> Apply(const std::string& job_cgroup,
                                               const HostShare& share) const;
  // Removes the v1 directories of the job whose v2 cgroup is `job_cgroup`,
  // once nothing is left in them; false while any remains.
  bool Remove(const std::string& job_cgroup) const;
  // Removes the v1 bases where they are empty (tests, gleaner doctor).
  void RemoveBases() const;
  // The jobs' bases in the v1 hierarchies limits use (none on cgroup v2).
  std::vector<std::string> V1Bases() const;

  bool cpu() const { return cpu_ != Where::kNone; }
  bool memory() const { return memory_ != Where::kNone; }
  // "cpu (cgroup v2), memory (cgroup v1)", or what is missing and why.
  std::string Describe() const;
  // What of `share` this host cannot enforce, for the job's stderr; empty
  // when it enforces all.
  std::string Unenforced(const HostShare& share) const;

 private:
  enum class Where { kNone, kV2, kV1 };
  Where cpu_ = Where::kNone;
  Where memory_ = Where::kNone;
  std::string cpu_v1_base_;     // the jobs' base in the v1 cpu hierarchy
  std::string memory_v1_base_;  // ... and in the v1 memory hierarchy
  std::string why_not_;         // for a controller found nowhere
};

}  // namespace gleaner::agent
