#pragma once

#include <memory>
#include <string_view>

namespace gleaner::sched {

// One way to place a job, as a scorer sees it: numbers only, so scorers are
// small, pure and testable without a cluster.
struct PlacementCandidate {
  int gpus = 1;              // GPUs the job takes
  int milli_per_gpu = 1000;  // its share of each (below 1000: a fraction of one GPU)
  int node_gpus = 0;         // GPUs on the node, in any state
  int node_free_milli = 0;   // the node's lendable free capacity before, all GPUs
  // The chosen GPU's free share before (fractional jobs; 1000 for a whole free GPU).
  int gpu_free_milli = 1000;
  bool within_one_island = true;
  int islands_broken = 0;
};

// Policy: how good one placement is. Lower cost is better; the search
// breaks ties by node and GPU order, so scorers need not. Implementations
// are stateless and thread-compatible.
class PlacementScorer {
 public:
  virtual ~PlacementScorer() = default;
  virtual double Cost(const PlacementCandidate& c) const = 0;
  virtual std::string_view Name() const = 0;
};

// The classic: the node left with the least free capacity (packs nodes,
// keeps empty ones for large gangs). The FGD paper's BestFit baseline.
class BestFitScorer final : public PlacementScorer {
 public:
  double Cost(const PlacementCandidate& c) const override;
  std::string_view Name() const override { return "bestfit"; }
};

// Best fit plus what it does to the shapes still placeable: keeps gangs on
// one NVLink island, keeps intact islands intact, puts fractions on GPUs
// already shared before splitting a whole one, and avoids leaving slivers
// of a GPU too small for most fractional jobs.
class FragmentationAwareScorer final : public PlacementScorer {
 public:
  double Cost(const PlacementCandidate& c) const override;
  std::string_view Name() const override { return "gleaner"; }
};

// "bestfit" or "gleaner"; nullptr for other names.
std::unique_ptr<PlacementScorer> MakePlacementScorer(std::string_view name);

}  // namespace gleaner::sched
