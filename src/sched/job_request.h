#pragma once

#include <compare>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/units.h"
#include "sched/job_spec.h"
#include "sched/runtime_history.h"

namespace gleaner::sched {

// One whole GPU in milli-GPU, the unit of fractional requests (the openb
// trace's gpu_milli).
inline constexpr int kMilliPerGpu = 1000;

// What the scheduler needs to know about a job: its shape, constraints and
// standing. Plain data; the daemon builds it from a JobSpec
// (RequestFromSpec), the simulator from a trace row.
struct JobRequest {
  JobId id = 0;
  std::string project;  // empty: the default project
  std::string user;
  int gpus = 1;  // on each node, all at once (a gang when > 1); elastic: the least
  // Spans this many nodes, `gpus` of one class on each, all or nothing; 1:
  // one node. Such a gang is never elastic nor fractional, and it waits
  // for free GPUs rather than preempting (docs/gangs.md).
  int nodes = 1;
  bool one_rack = false;  // its nodes all under one rack label, else one is preferred
  // Elastic: up to this many GPUs (all on one node), as many as are idle
  // when it starts. 0: exactly `gpus`.
  int max_gpus = 0;
  // Elastic and able to restart on fewer GPUs (down to `gpus`): when GPUs
  // are taken back it is shrunk (ResizeJob) before anyone is preempted.
  bool can_shrink = false;
  // The share of each GPU, 1..1000. Below 1000 (a fraction of one GPU,
  // which others may share) only with gpus == 1.
  int gpu_milli = kMilliPerGpu;
  core::Bytes min_gpu_memory;  // each GPU's total memory at least this
  // The most GPU memory the job uses on each GPU, as it declared. Zero:
  // undeclared, so it needs whole GPUs; otherwise it may also share a GPU
  // with a quiet holder that leaves this much free.
  core::Bytes gpu_memory;
  std::vector<std::string> gpu_models;  // allowed models (substrings of the name); empty: any
  // Host CPUs (thousandths) and memory on each node; zero: not asked, and
  // nothing is claimed (JobSpec::cpu_milli, memory).
  int64_t cpu_milli = 0;
  core::Bytes memory = {};
  PriorityClass priority_class = PriorityClass::kNormal;
  int priority = 0;         // within the class, -1000..1000, higher first
  bool preemptible = true;  // critical jobs never are, whatever this says
  // Saves its state when signalled, so preempting it loses little work.
  bool checkpoints = false;
  std::optional<core::Duration> expected_runtime;
  // How long it should run, at 80 % confidence, for placing it where the
  // GPU's quiet should outlast it: declared, or learned from the runs of
  // the same user and command (RuntimeHistory). Zero: nothing known. Only
  // placement reads it; backfill keeps to the declared expected_runtime.
  core::Duration runtime_guess{};
  std::string runtime_basis;  // where the guess comes from, in words

  bool fractional() const { return gpu_milli < kMilliPerGpu; }
  bool elastic() const { return max_gpus > gpus; }
  bool asks_host() const { return cpu_milli > 0 || memory.count() > 0; }
  // The whole request in milli-GPU: 4 GPUs are 4000, half a GPU 500, a gang
  // of 2 nodes x 8 GPUs 16000.
  int64_t total_milli() const { return int64_t{nodes} * gpus * gpu_milli; }
  bool spans_nodes() const { return nodes > 1; }
  bool may_be_preempted() const {
    return preemptible && priority_class != PriorityClass::kCritical;
  }
};

// What decides whether a job fits somewhere, and nothing else: jobs of
// one shape fit or fail alike, so a pass that found no place for one need
// not look again for the next of its shape (the Scheduler's shape misses).
// Every JobRequest field that placement reads to decide whether a job fits
// belongs here, and this is the one place that lists them. (Who may take
// reserved GPUs and what backfill holds the job to are judged beside it;
// the runtime guess orders a fit's GPUs, never decides whether there is one.)
struct FitShape {
  int gpus = 1;
  int max_gpus = 0;
  int gpu_milli = kMilliPerGpu;
  core::Bytes min_gpu_memory;
  std::vector<std::string> gpu_models;
  core::Bytes gpu_memory;
  int nodes = 1;
  bool one_rack = false;
  int64_t cpu_milli = 0;
  core::Bytes memory;

  static FitShape Of(const JobRequest& req);
  // A request of this shape with nothing else set (no id, user or project).
  JobRequest Request() const;
  auto operator<=>(const FitShape&) const = default;
};

// The scheduler's view of a submitted JobSpec. Whole GPUs only: JobSpec has
// no fractional form yet. The runtime guess is the declared
// expected_runtime, else the p80 of `history` (capped by max_runtime), else
// max_runtime.
JobRequest RequestFromSpec(JobId id, const JobSpec& spec, std::string user,
                           const RuntimeHistory* history = nullptr);
// What the spec's runs are known by in a RuntimeHistory.
RuntimeKey RuntimeKeyOf(const JobSpec& spec, const std::string& user);

// The shape checks that need no cluster: gpus at least 1, gpu_milli in
// 1..1000, fractions only of one GPU, priority in range. The message says
// what would be accepted.
core::Status ValidateRequestShape(const JobRequest& job);

// 0 for critical, 1 normal, 2 opportunistic: lower runs first.
int ClassRank(PriorityClass c);

}  // namespace gleaner::sched
