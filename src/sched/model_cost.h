#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/units.h"
#include "sched/cluster_state.h"

namespace gleaner::sched {

// What a GPU-hour of one model is worth to a job: its price, and how much
// work it does in that hour.
struct ModelPrice {
  std::string model;        // as priced ("T4", "V100-32GB")
  double per_gpu_hour = 0;  // in SchedulerConfig::currency
  double speed = 1;         // relative throughput; an A100 is 1
  // The price of an hour of an A100's work on this model.
  double per_useful_hour() const { return per_gpu_hour / speed; }
};

// The price of the GPUs a driver names `gpu_name` with `memory`; nullopt
// for a model nobody priced.
using ModelPriceFn =
    std::function<std::optional<ModelPrice>(const std::string& gpu_name, core::Bytes memory)>;

// Cost-aware choice between GPU models: the classes a job may use, cheapest
// useful GPU-hour first. The preference holds only where every class the
// job may use is priced (a price of zero, or a speed that is not positive,
// counts as unpriced): a model nobody priced is neither cheap nor dear, so
// such a job is placed as if no model had a price. Prices are asked once
// per class. Thread-compatible.
class ModelCosts {
 public:
  explicit ModelCosts(ModelPriceFn price) : price_(std::move(price)) {}

  // `allowed` split into tiers of equal price per useful hour, cheapest
  // first; empty when the preference does not apply to it (fewer than two
  // prices, or any class unpriced).
  std::vector<std::vector<ClassId>> Tiers(const ClusterState& cluster,
                                          const std::vector<ClassId>& allowed) const;
  // Why a job that may use `allowed` went to a GPU of `chosen`, in words
  // naming each model's price per useful hour; empty where Tiers is.
  std::string Why(const ClusterState& cluster, ClassId chosen, const std::vector<ClassId>& allowed,
                  const std::string& currency) const;

 private:
  const std::optional<ModelPrice>& PriceOf(const ClusterState& cluster, ClassId c) const;

  ModelPriceFn price_;
  mutable std::vector<std::optional<ModelPrice>> by_class_;
  mutable std::vector<bool> asked_;
};

}  // namespace gleaner::sched
