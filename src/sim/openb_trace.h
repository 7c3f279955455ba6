#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sched/frag_cluster.h"

namespace gleaner::sim {

// Readers for the openb trace format of Alibaba's GPU cluster trace
// (clusterdata cluster-trace-gpu-v2023), used by the FGD paper.
//
// Nodes (openb_node_list_*.csv): columns sn, cpu_milli, memory_mib, gpu,
// model. Pods (openb_pod_list_*.csv): name, cpu_milli, memory_mib,
// num_gpu, gpu_milli, gpu_spec (`|`-separated models; empty or "nan": any);
// other columns (qos, phase, times) are read past. Columns are found by
// name, in any order.
//
// Every row is checked: a wrong field count, a number that does not parse
// or is out of range (GPUs 0-8 per node and per pod, a share of 0-1000
// milli, a GPU pod with a share of 0, a node with GPUs but no model) is an
// InvalidArgument that names the file, the line and what was expected.
// Blank lines are skipped. NotFound when the file cannot be opened.
core::Result<std::vector<sched::FragNodeSpec>> ReadOpenbNodes(const std::string& path);
core::Result<std::vector<sched::FragPodSpec>> ReadOpenbPods(const std::string& path);

// The models a gpu_spec field allows: "V100M16|V100M32" -> both; "" and
// "nan" -> none (any model).
std::vector<std::string> SplitOpenbGpuSpec(std::string_view spec);

}  // namespace gleaner::sim
