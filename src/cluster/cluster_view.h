#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster/coordinator.h"

// How a coordinator shows its cluster: GET /v1/gpus as the
// gleaner.cluster/v1 document (docs/cluster.md) and GET /metrics.
namespace gleaner::cluster {

nlohmann::json ClusterToJson(const std::vector<HostView>& hosts, core::TimePoint now);

// `jobs`: the jobs that have not ended, by state.
std::string RenderClusterMetrics(const std::vector<HostView>& hosts,
                                 const std::map<std::string, int64_t>& jobs,
                                 const metrics::Histogram::Snapshot& start_latency, bool leading,
                                 core::TimePoint now);

}  // namespace gleaner::cluster
