#pragma once

#include <set>
#include <tuple>
#include <vector>

#include "sim/node_pool.h"
#include "sim/replay_policy.h"

namespace gleaner::sim {

// The baselines: one strict queue (the head blocks everyone behind it; no
// backfill) placed by NodePool's reference rule.
//  - kFifo: by arrival, then trace order. Issue 6's reference policy.
//  - kShortestFirst: by the job's real duration (an oracle no live
//    scheduler has), then arrival, then trace order.
//  - kPriority: by the job's priority, highest first, then arrival, then
//    trace order.
class QueuePolicy : public ReplayPolicy {
 public:
  enum class Order { kFifo, kShortestFirst, kPriority };

  QueuePolicy(Order order, const std::vector<TraceJob>& jobs, int nodes, int gpus_per_node);

  core::Status Finished(int job, int64_t now_s) override;
  core::Status Submitted(int job, int64_t now_s) override;
  core::Status Dispatch(int64_t now_s, std::vector<int>* started) override;
  size_t queued() const override { return queue_.size(); }

 private:
  // (primary key, arrival, trace index): unique, so the order is total.
  using Key = std::tuple<int64_t, int64_t, int>;

  Order order_;
  const std::vector<TraceJob>& jobs_;
  NodePool pool_;
  std::set<Key> queue_;
  std::vector<NodePool::Allocation> held_;  // per job, while it runs
};

}  // namespace gleaner::sim
