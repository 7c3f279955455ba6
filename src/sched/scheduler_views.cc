// What the Scheduler tells of its jobs: phases, wait reasons, allocations.
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

JobPhase Scheduler::Phase(JobId job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? JobPhase::kUnknown : it->second.phase;
}

core::Result<std::string> Scheduler::PendingReason(JobId id) const {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.phase != JobPhase::kPending) {
    return core::NotFound(JobWord(id) + " is not pending");
  }
  const Job& job = it->second;
  if (job.awaiting_victims > 0) {
    const std::string n = std::to_string(job.awaiting_victims);
    if (job.reclaiming != ReservationBook::kNone) {
      return "waiting for " + n + (job.awaiting_victims == 1 ? " borrower" : " borrowers") +
             " to leave the GPUs " + ReservationWords(reservations_.reservation(job.reclaiming));
    }
    return DescribeWait({WaitReason::Kind::kAwaitingVictims, {}, 0, 0, job.awaiting_victims},
                        job.req, cluster_);
  }
  const Job* judged = JudgedBy(job);
  if (!judged || judged->considered_in_pass < early_stop_pass_ ||
      judged->wait.kind == WaitReason::Kind::kNotConsidered ||
      !quotas_.Admits(job.req.project, job.req.total_milli())) {
    // The last pass stopped before this job, or passed over its project
    // (no room under its quota): judge it against the cluster as it is
    // now, which costs a few look-ups.
    const JobRequest& req = job.req;
    if (cluster_.live_gpu_count() == 0) {
      return DescribeWait({WaitReason::Kind::kNoNodes, {}, 0, 0, 0}, req, cluster_);
    }
    if (!quotas_.Admits(req.project, req.total_milli())) {
      return DescribeWait({WaitReason::Kind::kQuota,
                           {},
                           quotas_.used_milli(req.project),
                           quotas_.limit_milli(req.project).value_or(0),
                           0},
                          req, cluster_);
    }
    const NoFit fit = DescribeNoFit(cluster_, req, AllowedClasses(cluster_, req));
    const bool might_fit = req.fractional()
                               ? fit.largest_free > 0 || fit.largest_share_milli >= req.gpu_milli
                               : fit.largest_free >= req.gpus;
    if (might_fit) {
      return std::string(
          "not reached by the last pass, which stopped after many jobs ahead of it could not "
          "start; the next Tick considers every job");
    }
    return DescribeWait({WaitReason::Kind::kNoFit, fit, 0, 0, 0}, req, cluster_);
  }
  if (judged->wait.kind == WaitReason::Kind::kNoFit &&
      judged->wait.reserved_by != ReservationBook::kNone) {
    return "needs " + DescribeNeed(job.req) + Where(job.req) +
           "; the free GPUs that would fit it are " +
           ReservationWords(reservations_.reservation(judged->wait.reserved_by)) +
           ", lent only to preemptible jobs of other projects";
  }
  if (judged->wait.kind == WaitReason::Kind::kNoFit && judged->wait.kept_for != 0) {
    std::string s = "needs " + DescribeNeed(job.req) + Where(job.req) +
                    "; the free GPUs that would fit it are kept for " +
                    JobWord(judged->wait.kept_for);
    if (auto k = jobs_.find(judged->wait.kept_for); k != jobs_.end()) {
      s += " (needs " + DescribeNeed(k->second.req) + ")";
    }
    if (!judged->wait.kept_until) {
      return s +
             " until jobs without an expected runtime end; a job with an expected runtime may use "
             "them meanwhile";
    }
    const int64_t in_s = std::max<int64_t>(
        0, std::chrono::duration_cast<core::Seconds>(*judged->wait.kept_until - now_).count());
    return s + ", which should fit in " + std::to_string(in_s) +
           " s; only jobs expected to end by then may use them (backfill)";
  }
  return DescribeWait(judged->wait, job.req, cluster_);
}

const Scheduler::Job* Scheduler::JudgedBy(const Job& job) const {
  const auto g = static_cast<size_t>(job.queue_group);
  if (job.queue_group < 0 || g >= group_skips_.size() ||
      group_skips_[g].pass <= job.considered_in_pass) {
    return &job;
  }
  const auto by = jobs_.find(group_skips_[g].judged_by);
  if (by == jobs_.end() || by->second.phase != JobPhase::kPending ||
      by->second.considered_in_pass != group_skips_[g].pass) {
    return nullptr;
  }
  return &by->second;
}

core::Result<std::vector<core::GpuUuid>> Scheduler::ReservedGpus(const std::string& name) const {
  const auto s = reservations_.Find(name);
  if (!s) return core::NotFound("no reservation " + name + " (never added, or ended)");
  std::vector<core::GpuUuid> out;
  for (GpuIndex g : reservations_.gpus(*s)) out.push_back(cluster_.gpu(g).spec.uuid);
  return out;
}

std::vector<NodeIndex> Scheduler::NodesOf(const Job& job) const { return NodesOf(job.gpus); }

std::vector<NodeIndex> Scheduler::NodesOf(const std::vector<GpuIndex>& gpus) const {
  std::vector<NodeIndex> nodes;
  for (GpuIndex g : gpus) {
    const NodeIndex n = cluster_.gpu(g).node;
    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
  }
  return nodes;
}

std::optional<StartJob> Scheduler::Allocation(JobId id) const {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.phase == JobPhase::kPending) return std::nullopt;
  const Job& job = it->second;
  StartJob a{id, cluster_.node(job.node).id, {}, {}, job.req.gpu_milli, {}};
  for (GpuIndex g : job.gpus) {
    a.gpus.push_back(cluster_.gpu(g).spec.uuid);
    a.gpu_indices.push_back(cluster_.gpu(g).spec.index);
  }
  if (job.req.spans_nodes()) {
    for (NodeIndex n : NodesOf(job)) a.gang.push_back(cluster_.node(n).id);
  }
  return a;
}

}  // namespace gleaner::sched
