// The Scheduler's placement: which GPUs a job may take (reservations,
// pins) and where it goes among them.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/format.h"
#include "sched/frag_score.h"
#include "sched/gang_placement.h"
#include "sched/placement.h"
#include "sched/preemption.h"
#include "sched/scheduler.h"
#include "sched/scheduler_words.h"

namespace gleaner::sched {

Scheduler::ReservedAccess Scheduler::AccessOf(const Job& job) const {
  if (!reservations_.any_active()) return ReservedAccess::kNoneActive;
  if (reservations_.OwnsActive(job.req.project)) return ReservedAccess::kOwner;
  return job.req.may_be_preempted() ? ReservedAccess::kMayBorrow : ReservedAccess::kMayNot;
}

bool Scheduler::MayTake(const JobRequest& req, GpuIndex g) const {
  const int s = reservations_.HolderOf(g);
  return s == ReservationBook::kNone || reservations_.reservation(s).project == req.project ||
         req.may_be_preempted();
}

std::optional<Placement> Scheduler::Place(const JobRequest& req,
                                          const std::vector<ClassId>& allowed, int* reserved_by,
                                          const GpuFilter* keep_off) const {
  if (allowed.size() > 1) {
    const std::vector<std::vector<ClassId>> tiers = model_costs_.Tiers(cluster_, allowed);
    for (const std::vector<ClassId>& tier : tiers) {
      if (auto p = PlaceAmong(req, tier, reserved_by, keep_off)) return p;
    }
    if (!tiers.empty()) return std::nullopt;
  }
  return PlaceAmong(req, allowed, reserved_by, keep_off);
}

std::optional<Placement> Scheduler::PlaceAmong(const JobRequest& req,
                                               const std::vector<ClassId>& allowed,
                                               int* reserved_by, const GpuFilter* keep_off) const {
  if (!req.elastic()) return PlaceExactly(req, allowed, reserved_by, keep_off);
  // As many as fit within the range: the largest free set bounds it, and
  // so does what the project may still take.
  int most = req.max_gpus;
  int largest = 0;
  for (ClassId c : allowed) largest = std::max(largest, cluster_.LargestFree(c));
  most = std::min(most, largest);
  if (const auto limit = quotas_.limit_milli(req.project)) {
    most = static_cast<int>(
        std::min<int64_t>(most, (*limit - quotas_.used_milli(req.project)) / req.gpu_milli));
  }
  JobRequest sized = req;
  sized.max_gpus = 0;
  for (int count = most; count >= req.gpus; --count) {
    sized.gpus = count;
    if (auto p = PlaceExactly(sized, allowed, reserved_by, keep_off)) return p;
  }
  if (most < req.gpus) {
    sized.gpus = req.gpus;
    return PlaceExactly(sized, allowed, reserved_by, keep_off);  // says which reservation, if one
  }
  return std::nullopt;
}

std::optional<Placement> Scheduler::PlaceExactly(const JobRequest& req,
                                                 const std::vector<ClassId>& allowed,
                                                 int* reserved_by,
                                                 const GpuFilter* keep_off) const {
  const PlacementScorer& scorer = *policies_.scorer;
  const int limit = config_.placement_candidates;
  if (req.spans_nodes()) {
    // A gang borrows reserved GPUs as any job of its kind may, but takes
    // none of them first: its own reserved GPUs rarely span its nodes.
    if (!reservations_.any_active()) return FindGangPlacement(cluster_, req, allowed, keep_off);
    const GpuFilter may = [&](GpuIndex g) {
      return MayTake(req, g) && (keep_off == nullptr || (*keep_off)(g));
    };
    return FindGangPlacement(cluster_, req, allowed, &may);
  }
  if (!reservations_.any_active()) {
    return FindPlacement(cluster_, req, allowed, scorer, limit, keep_off);
  }
  const auto and_not_kept = [keep_off](const GpuFilter& f) -> GpuFilter {
    if (!keep_off) return f;
    return [keep_off, &f](GpuIndex g) { return (*keep_off)(g) && f(g); };
  };
  const auto owner_of = [&](GpuIndex g) -> const std::string* {
    const int s = reservations_.HolderOf(g);
    return s == ReservationBook::kNone ? nullptr : &reservations_.reservation(s).project;
  };
  // The owner's own reserved GPUs first: that is what they are for.
  if (reservations_.OwnsActive(req.project)) {
    std::vector<NodeIndex> nodes;
    for (int s : reservations_.Active()) {
      if (reservations_.reservation(s).project != req.project) continue;
      for (GpuIndex g : reservations_.gpus(s)) nodes.push_back(cluster_.gpu(g).node);
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    const GpuFilter own = [&](GpuIndex g) {
      const std::string* owner = owner_of(g);
      return owner && *owner == req.project;
    };
    if (auto p = FindPlacementOnNodes(cluster_, req, allowed, scorer, nodes, and_not_kept(own))) {
      return p;
    }
  }
  // Then unreserved GPUs (with the owner's own): a borrower there is never
  // reclaimed for a reservation.
  const GpuFilter unreserved = [&](GpuIndex g) {
    const std::string* owner = owner_of(g);
    return !owner || *owner == req.project;
  };
  const GpuFilter unreserved_not_kept = and_not_kept(unreserved);
  if (auto p = FindPlacement(cluster_, req, allowed, scorer, limit, &unreserved_not_kept)) return p;
  // Anything, others' reserved GPUs included: for preemptible jobs a loan,
  // for the others only to say which reservation keeps them waiting.
  auto p = FindPlacement(cluster_, req, allowed, scorer, limit, keep_off);
  if (!p || req.may_be_preempted()) return p;
  for (GpuIndex g : p->gpus) {
    const int s = reservations_.HolderOf(g);
    if (s != ReservationBook::kNone && reservations_.reservation(s).project != req.project) {
      *reserved_by = s;
      break;
    }
  }
  return std::nullopt;
}

}  // namespace gleaner::sched
