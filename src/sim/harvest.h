#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "observe/colocation.h"
#include "observe/idle_config.h"
#include "sim/harvest_queue.h"
#include "sim/owner_timeline.h"

namespace gleaner::sim {

// Who decides that an owner's GPU may be lent.
enum class HarvestPolicy {
  kNone,     // nothing is lent: the queue waits (today, without a harvester)
  kNaive,    // utilization under the threshold right now, no history
  kGleaner,  // gleaner's IdleClassifier and lending rule, as the daemon runs them
  // gleaner, and held-idle GPUs lent beside their holders to jobs that
  // declared memory which fits (observe::HeadroomBeside).
  kColocate,
  // kColocate, and holders held idle past `park_idle_s` parked (their GPU
  // state moved to host memory after a notice) so the GPU lends whole.
  kPark,
};
std::string_view HarvestPolicyName(HarvestPolicy policy);

// What placement knows of how long a job runs, to put it where the GPU's
// quiet is expected to outlast it (sched::WindowFit).
enum class RuntimeKnowledge {
  kNone,      // nothing: packing alone places it
  kHistory,   // the p80 of the same user's finished jobs, as the daemon learns it
  kDeclared,  // its true length, as if every user declared it exactly: a bound
};
std::string_view RuntimeKnowledgeName(RuntimeKnowledge k);
std::optional<RuntimeKnowledge> ParseRuntimeKnowledge(std::string_view name);

struct HarvestConfig {
  HarvestPolicy policy = HarvestPolicy::kGleaner;
  // Only policies that forecast quiet (not naive) can use it.
  RuntimeKnowledge runtimes = RuntimeKnowledge::kHistory;
  // A running job saves its state every this many seconds of running; a
  // preemption loses the work since the last save. 0: it never saves, and a
  // preemption loses the whole attempt.
  int64_t checkpoint_s = 0;
  // After the checkpoint signal a job takes this long to leave; meanwhile
  // the owner who came back waits.
  int64_t vacate_s = 30;
  // Timelines of occupancy counts have nothing between changes to sample:
  // each GPU is sampled when it changes, at the moment it has been quiet
  // long enough for an idle verdict (then every `watch_s` while the learned
  // model is not yet confident), and at least every `heartbeat_s`.
  int64_t heartbeat_s = 1800;
  int64_t watch_s = 60;
  // The scheduler is ticked this often while jobs wait.
  int64_t tick_s = 300;
  int slices = 400;               // points of the over-time series
  bool record_decisions = false;  // fill HarvestResult::decisions
  // The classifier's settings; max_sample_gap is set from the timeline.
  observe::IdleConfig idle;
  // Co-location and parking (kColocate, kPark). The trace's GPUs have this
  // much memory each; a job's declaration is what it uses.
  core::Bytes gpu_memory = core::Bytes::GiB(80);
  observe::ColocationConfig colocation;
  int64_t park_idle_s = 1800;   // held idle this long, its holder is told it will be parked
  int64_t park_notice_s = 300;  // then parked, unless it woke meanwhile
  // Restoring a parked holder copies its memory back at this rate (about
  // 5 GB/s was published for cuda-checkpoint on an H100).
  double restore_bytes_per_s = 5e9;
};

struct HarvestJobOutcome {
  int64_t first_start_s = -1;  // -1: never started
  int64_t end_s = -1;          // -1: not finished when the timeline ended
  int preemptions = 0;
  int64_t lost_gpu_s = 0;
  bool rejected = false;  // the scheduler said it can never run here
};

// One of `slices` equal slices of the timeline, in GPU-seconds (the queue:
// job-seconds of waiting).
struct HarvestSlice {
  double owner_busy = 0;   // the owner's, nobody else on it
  double harvested = 0;    // gleaner jobs on it (vacating included)
  double idle_unused = 0;  // quiet and nobody on it
  double queued = 0;
};

struct HarvestResult {
  std::vector<HarvestJobOutcome> jobs;  // in the order of the queue
  // The physical limit: GPU-seconds the owner left under the busy threshold,
  // of which `held_idle_gpu_s` with an owner process holding the GPU.
  int64_t idle_gpu_s = 0;
  int64_t held_idle_gpu_s = 0;
  int64_t owner_busy_gpu_s = 0;
  int64_t no_data_gpu_s = 0;
  int64_t harvested_gpu_s = 0;       // GPU-seconds jobs held GPUs
  int64_t harvested_idle_gpu_s = 0;  // of those, while the owner was quiet
  int64_t lost_gpu_s = 0;            // of those, work thrown away by preemptions
  int64_t preemptions = 0;           // jobs taken back
  int64_t owner_delay_gpu_s = 0;     // owners' GPU-seconds spent waiting for a job to leave
  int64_t owner_returns = 0;         // lent GPUs their owners claimed back
  // Co-location and parking. A holder-OOM risk minute is one in which the
  // holder's memory and a job's declared memory beside it add up to more
  // than the GPU has: the holder could fail to allocate.
  int64_t shared_gpu_s = 0;  // GPU-seconds jobs ran beside a holder
  int64_t parked_gpu_s = 0;  // GPU-seconds jobs ran on a parked holder's GPU
  int64_t holder_oom_risk_minutes = 0;
  int64_t parks = 0;
  int64_t restores = 0;  // parked holders that came back
  // Seconds restored holders waited in all: a job's vacate, then the copy.
  int64_t restore_wait_s = 0;
  int64_t samples = 0;  // samples the classifier judged
  int64_t instants = 0;
  std::vector<HarvestSlice> slices;
  // With record_decisions, one line per start and preemption, in order:
  // "<t_s> start job <index> on gpus <flat indices>", "<t_s> vacate job <index>".
  std::vector<std::string> decisions;
};

// Replays an owner timeline and an opportunistic queue (sorted by
// submit_s) on a virtual clock. Verdicts come from `config.policy`; the
// queue is placed by sched::Scheduler, the class the daemon runs, told of
// the GPUs it may lend in one batch per instant, of arrivals, exits and a
// periodic tick; a GPU its owner takes back preempts what runs there, which
// leaves after `vacate_s` and is requeued. At each instant, in this order:
// owner changes, samples and verdicts, exits, arrivals, the tick. No clock
// is read and no randomness is used: the same inputs give the same result.
core::Result<HarvestResult> RunHarvest(const OwnerTimeline& owner,
                                       const std::vector<HarvestJob>& queue,
                                       const HarvestConfig& config);

}  // namespace gleaner::sim
