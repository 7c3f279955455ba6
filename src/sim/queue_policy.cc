#include "sim/queue_policy.h"

namespace gleaner::sim {

QueuePolicy::QueuePolicy(Order order, const std::vector<TraceJob>& jobs, int nodes,
                         int gpus_per_node)
    : order_(order), jobs_(jobs), pool_(nodes, gpus_per_node), held_(jobs.size()) {}

core::Status QueuePolicy::Submitted(int job, int64_t now_s) {
  const TraceJob& j = jobs_[static_cast<size_t>(job)];
  int64_t primary = now_s;
  if (order_ == Order::kShortestFirst) primary = j.duration_s;
  if (order_ == Order::kPriority) primary = -int64_t{j.priority};  // the set sorts ascending
  queue_.emplace(primary, now_s, job);
  return core::Status::Ok();
}

core::Status QueuePolicy::Finished(int job, int64_t /*now_s*/) {
  NodePool::Allocation& a = held_[static_cast<size_t>(job)];
  pool_.Give(a);
  a.parts.clear();
  a.parts.shrink_to_fit();
  return core::Status::Ok();
}

core::Status QueuePolicy::Dispatch(int64_t /*now_s*/, std::vector<int>* started) {
  while (!queue_.empty()) {
    const int job = std::get<2>(*queue_.begin());
    std::optional<NodePool::Allocation> a = pool_.Take(jobs_[static_cast<size_t>(job)].gpus);
    if (!a) break;  // strict: the head blocks the rest
    held_[static_cast<size_t>(job)] = std::move(*a);
    queue_.erase(queue_.begin());
    started->push_back(job);
  }
  return core::Status::Ok();
}

}  // namespace gleaner::sim
