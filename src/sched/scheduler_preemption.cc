// The Scheduler's preemption: who may be evicted for whom, on what ground,
// and what becomes of a victim (vacated, shrunk, requeued).
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

bool Scheduler::Evictable(const Job& job) const {
  // A job that is shrinking is left alone until it has.
  return job.phase == JobPhase::kRunning && job.leaving.empty() && job.req.may_be_preempted();
}

void Scheduler::CountEvictable(const Job& job, int delta) {
  if (!Evictable(job)) return;
  evictable_by_rank_[ClassRank(job.req.priority_class)] += delta;
  for (NodeIndex m : NodesOf(job)) {
    int& n = evictable_on_node_[m];
    n += delta;
    if (n == 0) evictable_on_node_.erase(m);
  }
}

bool Scheduler::MayPreemptSomeone(const Job& job) const {
  // A gang waits for free GPUs: victims on several nodes at once are not
  // planned.
  if (job.req.spans_nodes()) return false;
  const int rank = ClassRank(job.req.priority_class);
  for (int r = rank + 1; r < 3; ++r) {
    if (evictable_by_rank_[r] > 0) return true;
  }
  if (reservations_.any_active() && reservations_.OwnsActive(job.req.project) &&
      Lent(job.req.project)) {
    return true;
  }
  return has_guarantees_ && quotas_.borrowing_projects() > 0 &&
         quotas_.WithinGuarantee(job.req.project, job.req.total_milli());
}

int Scheduler::ReservedGpuHeldFor(const Job& victim, const std::string& project) const {
  for (GpuIndex g : victim.gpus) {
    const int s = reservations_.HolderOf(g);
    if (s != ReservationBook::kNone && reservations_.reservation(s).project == project) return s;
  }
  return ReservationBook::kNone;
}

bool Scheduler::Lent(const std::string& project) const {
  for (int s : reservations_.Active()) {
    const Reservation& r = reservations_.reservation(s);
    if (!project.empty() && r.project != project) continue;
    for (GpuIndex g : reservations_.gpus(s)) {
      if (cluster_.gpu(g).free_milli == kMilliPerGpu) continue;
      for (JobId id : on_node_[cluster_.gpu(g).node]) {
        const Job& job = jobs_.at(id);
        if (job.req.project != r.project && Evictable(job) &&
            std::find(job.gpus.begin(), job.gpus.end(), g) != job.gpus.end()) {
          return true;
        }
      }
    }
  }
  return false;
}

Scheduler::Ground Scheduler::PreemptionGround(const Job& job, const Job& victim) const {
  if (!Evictable(victim)) return Ground::kNone;
  // A borrower of reserved GPUs gives them back to their owner at once,
  // protection or not, as it would to an owner returning to the machine.
  if (reservations_.any_active() && victim.req.project != job.req.project &&
      ReservedGpuHeldFor(victim, job.req.project) != ReservationBook::kNone) {
    return Ground::kReservation;
  }
  if (victim.started_at + config_.min_runtime > now_) return Ground::kNone;
  if (ClassRank(victim.req.priority_class) > ClassRank(job.req.priority_class)) {
    return Ground::kOutranked;
  }
  const std::string& p = job.req.project;
  const std::string& q = victim.req.project;
  if (q != p && quotas_.Borrowing(q) && quotas_.WithinGuarantee(p, job.req.total_milli())) {
    return Ground::kReclaim;
  }
  return Ground::kNone;
}

std::string Scheduler::DescribeGround(Ground ground, const Job& job, const Job& victim) const {
  const std::string& p = job.req.project;
  const std::string& q = victim.req.project;
  if (ground == Ground::kOutranked) {
    return std::string(PriorityClassName(job.req.priority_class)) + " work outranks " +
           std::string(PriorityClassName(victim.req.priority_class));
  }
  if (ground == Ground::kReservation) {
    const Reservation& r = reservations_.reservation(ReservedGpuHeldFor(victim, p));
    return "reservation " + r.name + " takes back GPUs reserved for project " + r.project +
           "; project " + ProjectName(q) + " borrowed them while they were idle";
  }
  return "project " + ProjectName(p) + " reclaims its guaranteed GPUs (uses " +
         MilliAsGpus(quotas_.used_milli(p)) + " of " + MilliAsGpus(quotas_.guaranteed_milli(p)) +
         "); project " + ProjectName(q) + " borrows beyond its " +
         MilliAsGpus(quotas_.guaranteed_milli(q));
}

bool Scheduler::TryPreempt(Job& job, std::vector<Action>* out) {
  const std::vector<ClassId>& allowed = Allowed(job);
  std::optional<NodeEviction> best;
  int found = 0;
  const GpuFilter may_take = [&](GpuIndex g) { return MayTake(job.req, g); };
  const auto consider = [&](NodeIndex n) {
    std::vector<EvictableJob> evictable;
    for (JobId id : on_node_[n]) {
      const Job& v = jobs_.at(id);
      if (PreemptionGround(job, v) == Ground::kNone) continue;
      VictimCandidate c{id,
                        v.req.priority_class,
                        v.req.priority,
                        HeldMilli(v),
                        now_ - v.started_at,
                        v.last_checkpoint ? std::optional(now_ - *v.last_checkpoint) : std::nullopt,
                        v.req.checkpoints};
      const double cost = policies_.victims->Cost(c);
      const auto least = static_cast<size_t>(v.req.gpus);
      if (v.req.spans_nodes()) {  // what preempting it frees here
        std::vector<GpuIndex> here;
        for (GpuIndex g : v.gpus) {
          if (cluster_.gpu(g).node == n) here.push_back(g);
        }
        evictable.push_back(
            {id, std::move(here), v.req.gpu_milli, cost, false, v.req.cpu_milli, v.req.memory});
        continue;
      }
      if (!v.req.can_shrink || v.gpus.size() <= least) {
        evictable.push_back(
            {id, v.gpus, v.req.gpu_milli, cost, false, v.req.cpu_milli, v.req.memory});
        continue;
      }
      // Shrinking an elastic job comes before any preemption: one entry
      // per GPU above its least, the last GPU first, each priced below
      // every victim (costs are non-negative); a preemption frees the rest.
      evictable.push_back({id,
                           {v.gpus.begin(), v.gpus.begin() + static_cast<long>(least)},
                           v.req.gpu_milli,
                           cost,
                           false,
                           v.req.cpu_milli,
                           v.req.memory});
      for (size_t i = v.gpus.size(); i-- > least;) {
        const double step = -1.0 + 1e-3 * static_cast<double>(v.gpus.size() - 1 - i);
        evictable.push_back({id, {v.gpus[i]}, v.req.gpu_milli, step, true, 0, {}});
      }
    }
    if (evictable.empty()) return;
    auto plan = PlanEvictionOnNode(cluster_, job.req, allowed, n, std::move(evictable),
                                   reservations_.any_active() ? &may_take : nullptr);
    if (!plan || (plan->victims.empty() && plan->shrinks.empty())) return;
    if (!best || plan->cost < best->cost) best = std::move(plan);
    ++found;
  };
  // Nodes with the most free GPUs first: they need the fewest victims.
  // The search stops after `preemption_candidate_nodes` workable nodes.
  std::vector<bool> seen(cluster_.node_count(), false);
  int largest = 0;
  for (ClassId c : allowed) largest = std::max(largest, cluster_.LargestFree(c));
  for (int count = largest; count >= 1; --count) {
    for (ClassId c : allowed) {
      for (NodeIndex n : cluster_.NodesWithFree(c, count)) {
        if (found >= config_.preemption_candidate_nodes) break;
        if (seen[n] || !evictable_on_node_.contains(n)) continue;
        seen[n] = true;
        consider(n);
      }
    }
  }
  for (const auto& [n, count] : evictable_on_node_) {
    if (found >= config_.preemption_candidate_nodes) break;
    if (!seen[n]) consider(n);
  }
  if (!best) return false;
  const std::string prefix = "for " + JobWord(job.req.id) + " (" +
                             std::string(PriorityClassName(job.req.priority_class)) + ", needs " +
                             DescribeNeed(job.req) + "): ";
  // Reasons first: preempting changes the usage they quote.
  std::vector<std::string> reasons;
  job.reclaiming = ReservationBook::kNone;
  for (JobId id : best->victims) {
    const Job& victim = jobs_.at(id);
    const Ground ground = PreemptionGround(job, victim);
    if (ground == Ground::kReservation) {
      job.reclaiming = ReservedGpuHeldFor(victim, job.req.project);
    }
    reasons.push_back(prefix + DescribeGround(ground, job, victim));
  }
  std::vector<std::string> shrink_reasons;
  for (const auto& [id, give_up] : best->shrinks) {
    const Job& victim = jobs_.at(id);
    const Ground ground = PreemptionGround(job, victim);
    if (ground == Ground::kReservation) {
      job.reclaiming = ReservedGpuHeldFor(victim, job.req.project);
    }
    shrink_reasons.push_back(prefix + DescribeGround(ground, job, victim));
  }
  for (size_t i = 0; i < best->shrinks.size(); ++i) {
    Shrink(jobs_.at(best->shrinks[i].first), best->shrinks[i].second, shrink_reasons[i], job.req.id,
           out);
  }
  for (size_t i = 0; i < best->victims.size(); ++i) {
    Preempt(jobs_.at(best->victims[i]), reasons[i], job.req.id, out);
  }
  job.awaiting_victims = static_cast<int>(best->victims.size() + best->shrinks.size());
  job.wait = {WaitReason::Kind::kAwaitingVictims, {}, 0, 0, job.awaiting_victims};
  return true;
}

void Scheduler::Preempt(Job& victim, const std::string& reason, std::optional<JobId> beneficiary,
                        std::vector<Action>* out) {
  CountEvictable(victim, -1);
  victim.phase = JobPhase::kVacating;
  // A shrinking job taken back whole still frees GPUs for the job it shrank for.
  if (beneficiary) victim.beneficiary = beneficiary;
  victim.preempt_reason = reason;
  out->push_back(PreemptJob{victim.req.id, reason});
}

void Scheduler::Shrink(Job& job, const std::vector<GpuIndex>& give_up, const std::string& reason,
                       std::optional<JobId> beneficiary, std::vector<Action>* out) {
  CountEvictable(job, -1);
  job.leaving = give_up;
  job.beneficiary = beneficiary;
  ResizeJob action{job.req.id, cluster_.node(job.node).id, {}, {}, reason};
  for (GpuIndex g : job.gpus) {
    if (std::find(give_up.begin(), give_up.end(), g) != give_up.end()) continue;
    action.gpus.push_back(cluster_.gpu(g).spec.uuid);
    action.gpu_indices.push_back(cluster_.gpu(g).spec.index);
  }
  out->push_back(std::move(action));
}

void Scheduler::VictimLeft(Job& victim) {
  if (!victim.beneficiary) return;
  auto b = jobs_.find(*victim.beneficiary);
  if (b != jobs_.end() && b->second.phase == JobPhase::kPending && b->second.awaiting_victims > 0 &&
      --b->second.awaiting_victims == 0) {
    victims_gone_.push_back(*victim.beneficiary);
  }
  victim.beneficiary.reset();
}

// ---- bookkeeping --------------------------------------------------------

void Scheduler::Release(Job& job) {
  CountEvictable(job, -1);
  Charge(job, now_);
  for (NodeIndex n : NodesOf(job)) {
    auto& here = on_node_[n];
    here.erase(std::find(here.begin(), here.end(), job.req.id));
    cluster_.GiveHost(n, job.req);
  }
  for (GpuIndex g : job.gpus) cluster_.Give(g, job.req.gpu_milli);
  quotas_.Remove(job.req.project, HeldMilli(job));
  --running_count_;
  VictimLeft(job);
  job.gpus.clear();
  job.leaving.clear();
  dirty_ = true;
}

void Scheduler::Requeue(Job& job, const std::string& reason, std::vector<Action>* out) {
  job.phase = JobPhase::kPending;
  job.wait = {};
  job.awaiting_victims = 0;
  job.reclaiming = ReservationBook::kNone;
  // It keeps its submit time, so its age still counts.
  Enqueue(job);
  out->push_back(RequeueJob{job.req.id, reason});
}

}  // namespace gleaner::sched
