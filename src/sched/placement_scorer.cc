#include "sched/placement_scorer.h"

namespace gleaner::sched {
namespace {

int FreeAfter(const PlacementCandidate& c) { return c.node_free_milli - c.gpus * c.milli_per_gpu; }

}  // namespace

double BestFitScorer::Cost(const PlacementCandidate& c) const { return FreeAfter(c); }

double FragmentationAwareScorer::Cost(const PlacementCandidate& c) const {
  // Weights in milli-GPU, so each says how many GPUs of leftover capacity
  // it is worth: a gang split across islands costs as much as leaving 8
  // GPUs idle, because its collectives then run over PCIe.
  double cost = FreeAfter(c);
  if (!c.within_one_island) cost += 8000;
  cost += 2000.0 * c.islands_broken;
  if (c.milli_per_gpu < 1000) {
    const int gpu_left = c.gpu_free_milli - c.milli_per_gpu;
    if (c.gpu_free_milli == 1000) cost += 1500;  // splitting a whole GPU
    // A sliver under a tenth of a GPU fits almost no job in the openb
    // trace: count it as lost.
    if (gpu_left > 0 && gpu_left < 100) cost += 500;
  }
  return cost;
}

std::unique_ptr<PlacementScorer> MakePlacementScorer(std::string_view name) {
  if (name == "bestfit") return std::make_unique<BestFitScorer>();
  if (name == "gleaner") return std::make_unique<FragmentationAwareScorer>();
  return nullptr;
}

}  // namespace gleaner::sched
