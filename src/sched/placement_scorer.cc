#include "sched/placement_scorer.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace gleaner::sched {
namespace {

int FreeAfter(const PlacementCandidate& c) { return c.node_free_milli - c.gpus * c.milli_per_gpu; }

bool SameShapes(const std::vector<TypicalShape>& a, const std::vector<TypicalShape>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const TypicalShape& x, const TypicalShape& y) {
                      return x.weight == y.weight && x.pod.cpu_milli == y.pod.cpu_milli &&
                             x.pod.num_gpu == y.pod.num_gpu && x.pod.gpu_milli == y.pod.gpu_milli &&
                             x.pod.model_mask == y.pod.model_mask;
                    });
}

}  // namespace

double BestFitScorer::Cost(const PlacementCandidate& c) const { return FreeAfter(c); }

void FragmentationAwareScorer::Learn(const WorkloadProfile& profile,
                                     const std::vector<bool>& oversubscribed) {
  // The meter's memo holds while the shapes do: kept when they are alike.
  const bool same_shapes = meter_ && SameShapes(profile.shapes, profile_.shapes);
  profile_ = profile;
  oversubscribed_ = oversubscribed;
  if (profile_.shapes.empty()) {
    meter_.reset();
  } else if (!same_shapes) {
    meter_.emplace(profile_.shapes);
  }
}

double FragmentationAwareScorer::Cost(const PlacementCandidate& c) const {
  if (!meter_) return Heuristic(c);
  // One number orders the tiers: each tier's unit exceeds all that the
  // tiers below can add (views of at most 8 GPUs: best fit 0..8,000 milli,
  // the shortage -8,000..8,000 milli-GPU; at most 64 islands), and every
  // term is a whole number, so doubles keep them exact.
  constexpr double kShortage = 2e4;
  constexpr double kIsland = 4e8;
  constexpr double kFgdPoint = 3e10;
  constexpr double kOffNvlink = 4e12;
  constexpr double kAvoid = 8e12;
  double cost = (c.within_one_island ? 0 : kOffNvlink) + kIsland * c.islands_broken;
  if (c.node.gpus == 0) return cost + kFgdPoint * 100 + FreeAfter(c);
  const auto model = static_cast<size_t>(c.node.model);
  const bool oversubscribed = model < oversubscribed_.size() && oversubscribed_[model];
  const GleanerScore s = ScorePlacement(c.node, c.pod, c.gpu_mask, meter_->Of(c.node), *meter_,
                                        profile_, oversubscribed);
  if (s.avoid_model < 0) cost += kAvoid;
  cost += kFgdPoint * (100 - s.fgd);
  // The shortage's growth in milli-CPU, as the milli-GPU it strands.
  const double stranded = profile_.cpu_per_gpu_milli > 0
                              ? std::round(-s.shortage_drop / profile_.cpu_per_gpu_milli)
                              : 0;
  cost += kShortage * (std::clamp(stranded, -8000.0, 8000.0) + 8000);
  return cost + static_cast<double>(c.node.TotalGpuFree() - c.pod.total_gpu_milli());
}

double FragmentationAwareScorer::Heuristic(const PlacementCandidate& c) const {
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
