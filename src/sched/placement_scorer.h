#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "sched/frag_cluster.h"
#include "sched/frag_measure.h"
#include "sched/frag_score.h"

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
  // The node as the fragmentation score sees it (sched/frag_score.h): the
  // free CPU and the free share of each GPU of the candidate's class
  // (`node.model` is the class id), before; `gpu_mask`, the GPUs taken
  // there; `pod`, the job. Filled for scorers that learn the workload;
  // node.gpus == 0 otherwise, or where the search could not describe the
  // node so (more than 8 GPUs taken, over 32 classes).
  FragNodeState node = {};
  uint8_t gpu_mask = 0;
  FragPod pod = {};
};

// Policy: how good one placement is. Lower cost is better; the search
// breaks ties by node and GPU order, so scorers need not. A scorer keeps
// only what it is told of the workload (Learn), between searches;
// not thread-safe (a scorer may keep a memo, even through const).
class PlacementScorer {
 public:
  virtual ~PlacementScorer() = default;
  virtual double Cost(const PlacementCandidate& c) const = 0;
  virtual std::string_view Name() const = 0;
  // The workload the scheduler places (its jobs as pods, model ids being
  // class ids) and, per class, whether pinned jobs oversubscribe it now.
  virtual void Learn(const WorkloadProfile& /*profile*/,
                     const std::vector<bool>& /*oversubscribed*/) {}
  // Whether Learn does anything: the scheduler profiles its jobs, and the
  // search describes each candidate's node (PlacementCandidate::node), only
  // for such a scorer.
  virtual bool LearnsWorkload() const { return false; }
};

// The classic: the node left with the least free capacity (packs nodes,
// keeps empty ones for large gangs). The FGD paper's BestFit baseline.
class BestFitScorer final : public PlacementScorer {
 public:
  double Cost(const PlacementCandidate& c) const override;
  std::string_view Name() const override { return "bestfit"; }
};

// The fragmentation experiment's policy (sched/frag_score.h) once it has
// learned the workload. Its cost orders, each tier before the next: a
// class pinned jobs oversubscribe (for a job that may go elsewhere), a gang
// off NVLink, FGD's score over the workload's shapes, intact islands
// broken, the GPUs the placement leaves short of CPU, best fit within the
// class. A node it cannot describe (more than 8 GPUs taken, a class id past
// 31) ranks as FGD's worst score. Before it has learned a workload: best
// fit with the islands' terms, fractions on GPUs already shared before a
// whole one is split, and no slivers too small for most jobs.
class FragmentationAwareScorer final : public PlacementScorer {
 public:
  double Cost(const PlacementCandidate& c) const override;
  std::string_view Name() const override { return "gleaner"; }
  void Learn(const WorkloadProfile& profile, const std::vector<bool>& oversubscribed) override;
  bool LearnsWorkload() const override { return true; }

 private:
  double Heuristic(const PlacementCandidate& c) const;

  WorkloadProfile profile_;
  std::vector<bool> oversubscribed_;
  std::optional<FragmentationMeter> meter_;  // over profile_'s shapes; none before Learn
};

// "bestfit" or "gleaner"; nullptr for other names.
std::unique_ptr<PlacementScorer> MakePlacementScorer(std::string_view name);

}  // namespace gleaner::sched
