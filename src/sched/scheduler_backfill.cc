// The Scheduler's backfill: when a blocked job's GPUs should free, and the
// shadow plan that lets smaller jobs run before it without delaying it.
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

Scheduler::Backfill Scheduler::BackfillOf(const Job& job) const {
  if (shadow_.job == 0 || shadow_.job == job.req.id || job.key < shadow_.key) {
    return Backfill::kFree;
  }
  const auto blocked = jobs_.find(shadow_.job);
  if (blocked == jobs_.end() || blocked->second.phase != JobPhase::kPending) return Backfill::kFree;
  if (job.req.expected_runtime &&
      (!shadow_.at || now_ + *job.req.expected_runtime <= *shadow_.at)) {
    return Backfill::kEndsBefore;
  }
  return Backfill::kMustSpare;
}

std::optional<core::TimePoint> Scheduler::ExpectedEnd(const Job& job) const {
  if (job.phase == JobPhase::kVacating) return now_;  // on its way out
  if (!job.req.expected_runtime) return std::nullopt;
  const core::TimePoint end = job.started_at + *job.req.expected_runtime;
  // One that overran its estimate could run on for any time.
  if (end < now_) return std::nullopt;
  return end;
}

void Scheduler::MaybePlanShadow(Job& job) {
  if ((!config_.backfill && !job.req.spans_nodes()) || job.phase != JobPhase::kPending ||
      job.wait.kind != WaitReason::Kind::kNoFit || job.wait.kept_for != 0 ||
      job.awaiting_victims > 0 || job.req.fractional()) {
    return;
  }
  // A newcomer that sorts before the job holding the shadow takes it over.
  // A gang holding the shadow gathers the nodes that drained since.
  if (BackfillOf(job) != Backfill::kFree || (shadow_.job == job.req.id && !job.req.spans_nodes())) {
    return;
  }
  if (shadow_.job != 0 && shadow_.job != job.req.id && !(job.key < shadow_.key)) {
    const auto holder = jobs_.find(shadow_.job);
    if (holder != jobs_.end() && holder->second.phase == JobPhase::kPending) return;
  }
  PlanShadow(job);
}

std::optional<Scheduler::NodeFree> Scheduler::WhenFree(NodeIndex n, ClassId c,
                                                       const JobRequest& blocked) const {
  const int need = blocked.gpus;
  const NodeState& node = cluster_.node(n);
  int have = cluster_.FreeWhole(n, c);
  int64_t cpu = node.free_cpu_milli;
  int64_t memory = node.free_memory;
  const auto spare = [&] {
    return Spare{have - need, cpu - blocked.cpu_milli,
                 memory - static_cast<int64_t>(blocked.memory.count())};
  };
  const auto fits = [&] { return have >= need && HostFits(node.capacity, cpu, memory, blocked); };
  if (fits()) return NodeFree{now_, spare()};
  // Running jobs by expected end, unknown ends last.
  std::vector<std::pair<std::optional<core::TimePoint>, JobId>> ends;
  for (JobId id : on_node_[n]) ends.emplace_back(ExpectedEnd(jobs_.at(id)), id);
  std::sort(ends.begin(), ends.end(), [](const auto& a, const auto& b) {
    if (a.first.has_value() != b.first.has_value()) return a.first.has_value();
    return a.first == b.first ? a.second < b.second : *a.first < *b.first;
  });
  // A shared GPU is free only when its last job leaves.
  std::map<GpuIndex, int> free_milli;
  for (const auto& [end, id] : ends) {
    const Job& j = jobs_.at(id);
    for (GpuIndex g : j.gpus) {
      const GpuState& gpu = cluster_.gpu(g);
      if (gpu.node != n || gpu.gpu_class != c || !gpu.spec.lendable) continue;
      auto [it, added] = free_milli.try_emplace(g, gpu.free_milli);
      it->second += j.req.gpu_milli;
      if (it->second == kMilliPerGpu) ++have;
    }
    cpu += j.req.cpu_milli;
    memory += static_cast<int64_t>(j.req.memory.count());
    if (fits()) return NodeFree{end, spare()};
  }
  return std::nullopt;
}

void Scheduler::PlanShadow(Job& blocked) {
  const auto needed = static_cast<size_t>(blocked.req.nodes);
  // Sooner first: known times before unknown, then earlier; ties to the
  // lower node.
  const auto sooner = [](const std::pair<NodeFree, NodeIndex>& a,
                         const std::pair<NodeFree, NodeIndex>& b) {
    if (a.first.at.has_value() != b.first.at.has_value()) return a.first.at.has_value();
    return a.first.at == b.first.at ? a.second < b.second : *a.first.at < *b.first.at;
  };
  std::optional<Shadow> best;
  for (ClassId c : Allowed(blocked)) {
    std::vector<std::pair<NodeFree, NodeIndex>> nodes;
    for (NodeIndex n = 0; n < cluster_.node_count(); ++n) {
      if (!cluster_.node(n).alive) continue;
      // One node: a job that fits one now is kept off by something else.
      if (needed == 1 && (on_node_[n].empty() || (cluster_.FreeWhole(n, c) >= blocked.req.gpus &&
                                                  cluster_.HasHostRoom(n, blocked.req)))) {
        continue;
      }
      if (auto when = WhenFree(n, c, blocked.req)) nodes.emplace_back(*when, n);
    }
    if (nodes.size() < needed) continue;
    std::partial_sort(nodes.begin(), nodes.begin() + static_cast<long>(needed), nodes.end(),
                      sooner);
    Shadow here{blocked.req.id, blocked.key, nodes[needed - 1].first.at, {}};
    for (size_t i = 0; i < needed; ++i) {
      // A gang keeps the nodes that hold a member now and gathers the rest
      // as they drain: binding busy nodes too would hold back every job
      // behind it for their unknown runtimes (measured: docs/benchmarks.md,
      // "Gangs in the replay").
      if (needed > 1 && nodes[i].first.at != now_) continue;
      here.nodes.emplace_back(nodes[i].second, nodes[i].first.spare);
    }
    const auto later = [](const std::optional<core::TimePoint>& a,
                          const std::optional<core::TimePoint>& b) {
      if (a.has_value() != b.has_value()) return !a.has_value();
      return a.has_value() && *a > *b;
    };
    if (!best || later(best->at, here.at) ||
        (best->at == here.at && here.nodes.front().first < best->nodes.front().first)) {
      best = std::move(here);
    }
  }
  if (best) shadow_ = *best;
}

}  // namespace gleaner::sched
