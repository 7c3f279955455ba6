#include "sched/model_cost.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/format.h"

namespace gleaner::sched {
namespace {}  // namespace

const std::optional<ModelPrice>& ModelCosts::PriceOf(const ClusterState& cluster, ClassId c) const {
  if (by_class_.size() <= c) {
    by_class_.resize(c + 1);
    asked_.resize(c + 1, false);
  }
  if (!asked_[c]) {
    asked_[c] = true;
    const GpuClass& k = cluster.gpu_class(c);
    std::optional<ModelPrice> p = price_ ? price_(k.model, k.memory) : std::nullopt;
    const bool usable = p && std::isfinite(p->per_gpu_hour) && p->per_gpu_hour > 0 &&
                        std::isfinite(p->speed) && p->speed > 0;
    by_class_[c] = usable ? std::move(p) : std::nullopt;
  }
  return by_class_[c];
}

std::vector<std::vector<ClassId>> ModelCosts::Tiers(const ClusterState& cluster,
                                                    const std::vector<ClassId>& allowed) const {
  if (!price_) return {};  // off, or nothing priced: no work on the placement path
  std::vector<std::pair<double, ClassId>> priced;
  for (ClassId c : allowed) {
    const std::optional<ModelPrice>& p = PriceOf(cluster, c);
    if (!p) return {};
    priced.emplace_back(p->per_useful_hour(), c);
  }
  std::stable_sort(priced.begin(), priced.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (priced.size() < 2 || priced.front().first == priced.back().first) return {};
  std::vector<std::vector<ClassId>> tiers;
  for (size_t i = 0; i < priced.size(); ++i) {
    if (i == 0 || priced[i].first != priced[i - 1].first) tiers.emplace_back();
    tiers.back().push_back(priced[i].second);
  }
  return tiers;
}

std::string ModelCosts::Why(const ClusterState& cluster, ClassId chosen,
                            const std::vector<ClassId>& allowed,
                            const std::string& currency) const {
  if (Tiers(cluster, allowed).empty()) return "";
  const ModelPrice& mine = *PriceOf(cluster, chosen);
  // One entry per model: shared GPUs of a model are classes of their own.
  std::map<std::pair<double, std::string>, bool> others;  // -> cheaper, so it was full
  for (ClassId c : allowed) {
    const ModelPrice& p = *PriceOf(cluster, c);
    if (p.model == mine.model) continue;
    others.emplace(std::pair(p.per_useful_hour(), p.model),
                   p.per_useful_hour() < mine.per_useful_hour());
  }
  std::string why =
      "the cheapest useful GPU-hour with room among the models it may use: " + mine.model + " at " +
      core::FormatFixed(mine.per_useful_hour(), 2) + " " + currency + " per A100-hour of work (" +
      core::FormatFixed(mine.per_gpu_hour, 2) + " per GPU-hour, speed " +
      core::FormatFixed(mine.speed, 2) + ")";
  std::string rest;
  for (const auto& [key, full] : others) {
    rest += (rest.empty() ? "" : ", ") + key.second + " " + core::FormatFixed(key.first, 2) +
            (full ? " (no room)" : "");
  }
  return why + "; " + rest;
}

}  // namespace gleaner::sched
