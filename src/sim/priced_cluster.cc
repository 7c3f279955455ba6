#include "sim/priced_cluster.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "cost/catalog.h"
#include "cost/gpu_hour_prices.h"
#include "cost/gpu_speed.h"
#include "sim/openb_trace.h"

namespace gleaner::sim {
namespace {

// The catalog's name for an openb model code.
std::string CatalogModel(const std::string& openb_model) {
  if (openb_model == "V100M16") return "V100-16GB";
  if (openb_model == "V100M32") return "V100-32GB";
  return openb_model;
}

}  // namespace

core::Result<PricedCluster> ReadPricedOpenbCluster(const std::string& node_list) {
  GLEANER_ASSIGN_OR_RETURN(const std::vector<sched::FragNodeSpec> specs, ReadOpenbNodes(node_list));
  GLEANER_ASSIGN_OR_RETURN(
      const cost::Catalog catalog,
      cost::Catalog::Parse(cost::BuiltinCatalogCsv(), cost::kBuiltinCatalogName));
  std::map<std::string, std::optional<sched::ModelPrice>> prices;
  std::map<std::string, int> unpriced_nodes;
  PricedCluster out;
  for (const sched::FragNodeSpec& n : specs) {
    if (n.gpus == 0) continue;
    auto [it, fresh] = prices.try_emplace(n.model);
    if (fresh) {
      const cost::GpuHourPrices p = cost::PriceGpuHours(CatalogModel(n.model), catalog,
                                                        std::nullopt, cost::Currency::kUsd, {});
      const std::optional<cost::GpuSpeed> speed = cost::PublishedGpuSpeed(n.model);
      if (p.cloud_per_gpu_hour && speed) {
        it->second = sched::ModelPrice{n.model, *p.cloud_per_gpu_hour, speed->relative_to_a100};
        char line[160];
        std::snprintf(line, sizeof line, "%s %.3f USD/h (%s) at speed %.3f", n.model.c_str(),
                      *p.cloud_per_gpu_hour, p.cloud_offer.c_str(), speed->relative_to_a100);
        out.priced.push_back(line);
      }
    }
    if (!it->second) {
      ++unpriced_nodes[n.model];
      continue;
    }
    out.nodes.push_back({n.model, n.gpus});
    out.gpus += n.gpus;
    out.largest_node = std::max(out.largest_node, n.gpus);
  }
  for (const auto& [model, count] : unpriced_nodes) {
    out.left_out.push_back(model + " (" + std::to_string(count) + " nodes)");
  }
  if (out.nodes.empty()) {
    return core::InvalidArgument(node_list +
                                 ": no node of a model with both a catalog price and a published "
                                 "speed; expected some of T4, V100M16, V100M32, A10, A100, H100");
  }
  out.price = [prices](const std::string& model, core::Bytes) -> std::optional<sched::ModelPrice> {
    auto it = prices.find(model);
    return it == prices.end() ? std::nullopt : it->second;
  };
  return out;
}

int64_t DropJobsWithoutANode(const std::vector<ReplayNode>& nodes, std::vector<TraceJob>* jobs) {
  const size_t before = jobs->size();
  std::erase_if(*jobs, [&](const TraceJob& j) {
    return std::none_of(nodes.begin(), nodes.end(),
                        [&](const ReplayNode& n) { return NodeCanRun(n, j); });
  });
  return static_cast<int64_t>(before - jobs->size());
}

}  // namespace gleaner::sim
