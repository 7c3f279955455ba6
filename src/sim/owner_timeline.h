#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/utilization_trace.h"

namespace gleaner::sim {

// What a GPU's owner does with it from `at_s` until the GPU's next segment.
struct OwnerSegment {
  int64_t at_s = 0;
  bool has_data = false;  // false: the trace says nothing (a gap, or the GPU is not there)
  double utilization_pct = 0;
  int64_t memory_bytes = 0;    // held by the owner's processes
  bool owner_process = false;  // an owner process is on the GPU

  bool operator==(const OwnerSegment&) const = default;
};

// The owner workload of a harvest scenario: who occupies which GPUs when.
// GPUs are numbered node by node. Times are whole seconds on the trace's
// own clock.
struct OwnerTimeline {
  std::string name;
  int64_t start_s = 0;
  int64_t end_s = 0;
  std::vector<int> node_gpus;  // GPUs of each node
  // Per GPU, sorted by at_s, the first at start_s; adjacent segments differ.
  std::vector<std::vector<OwnerSegment>> gpus;
  // The trace's sampling step: a sample further than three steps from the
  // last is a gap to the idle classifier, as a missed sampling pass would be.
  int64_t step_s = 60;
  // Whether the trace reports each GPU's readings (a utilization series) or
  // only occupancy counts. With counts there is nothing between changes to
  // sample, so the simulator samples a GPU when it changes, while it is
  // watched before an idle verdict, and at a heartbeat.
  bool from_counts = true;

  int gpu_count() const { return static_cast<int>(gpus.size()); }
};

// GPU-seconds the owner left under `busy_pct` utilization (with data): the
// most a harvester could use.
int64_t QuietGpuSeconds(const OwnerTimeline& timeline, double busy_pct);

// A group of units (whole nodes, or single GPUs) of which a trace says only
// how many the owner used and how many were there, step by step.
struct OccupancyStep {
  int64_t at_s = 0;     // from here until the next step
  int32_t busy = 0;     // units the owner used
  int32_t present = 0;  // units the trace counted; the rest had no data
};
struct OccupancyGroup {
  std::string name;
  // GPUs per node of the group. With `whole_nodes` a unit is a node;
  // otherwise a unit is one GPU, counted across the nodes in order.
  std::vector<int> node_gpus;
  bool whole_nodes = false;
  std::vector<OccupancyStep> steps;  // strictly increasing at_s
};

// Builds the timeline of several groups side by side (nodes of the first
// group first), from the earliest step to `end_s`; before a group's first
// step its units have no data. The owner always occupies a group's
// lowest-numbered units, as first-fit schedulers fill a cluster (Slurm's
// default node order, most packing schedulers): the high-numbered units are
// the ones that stay free. A count says nothing of which units its jobs
// held; this is the assumption, and docs/simulator.md says so.
core::Result<OwnerTimeline> TimelineFromOccupancy(std::string name,
                                                  const std::vector<OccupancyGroup>& groups,
                                                  int64_t end_s);

// One GPU per series (a pod of the Alibaba GenAI trace): its utilization and
// memory as sampled, a gap where samples are further apart than three of
// the trace's median steps. Memory held or any utilization means an owner
// process is on the GPU. Nodes of `gpus_per_node` GPUs in series order.
OwnerTimeline TimelineFromUtilization(std::string name,
                                      const std::vector<UtilizationSeries>& series,
                                      int gpus_per_node);

}  // namespace gleaner::sim
