#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "sched/model_cost.h"
#include "sim/replay.h"
#include "sim/trace_job.h"

namespace gleaner::sim {

// A replay's cluster of several GPU models from an openb node list, each
// model priced at the shipped catalog's cheapest on-demand GPU-hour (USD;
// the price of renting it, for want of what the site paid) at its
// published speed (cost::PublishedGpuSpeed). Nodes of a model without both
// are left out: G1-G3 are undisclosed models, and P100 has no catalog row.
struct PricedCluster {
  std::vector<ReplayNode> nodes;
  sched::ModelPriceFn price;
  std::vector<std::string> priced;    // "T4 0.53 USD/h at 0.21", model order
  std::vector<std::string> left_out;  // "G2 (549 nodes)"
  int gpus = 0;
  int largest_node = 0;
};
core::Result<PricedCluster> ReadPricedOpenbCluster(const std::string& node_list);

// Removes the jobs no node of `nodes` can run (too many GPUs, or only
// models left out); returns how many.
int64_t DropJobsWithoutANode(const std::vector<ReplayNode>& nodes, std::vector<TraceJob>* jobs);

}  // namespace gleaner::sim
