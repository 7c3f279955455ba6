#include "sim/replay_policy.h"

#include "sim/gleaner_policy.h"
#include "sim/queue_policy.h"

namespace gleaner::sim {

core::Result<std::unique_ptr<ReplayPolicy>> MakeReplayPolicy(const std::string& name,
                                                             const std::vector<TraceJob>& jobs,
                                                             const ReplayPolicyOptions& o) {
  std::unique_ptr<ReplayPolicy> p;
  if (!o.models.empty() && name != "gleaner") {
    return core::InvalidArgument(
        "a cluster of several GPU models replays under policy gleaner "
        "only; give --policy gleaner");
  }
  if (name == "fifo") {
    p = std::make_unique<QueuePolicy>(QueuePolicy::Order::kFifo, jobs, o.nodes, o.gpus_per_node);
  } else if (name == "sjf") {
    p = std::make_unique<QueuePolicy>(QueuePolicy::Order::kShortestFirst, jobs, o.nodes,
                                      o.gpus_per_node);
  } else if (name == "priority") {
    p = std::make_unique<QueuePolicy>(QueuePolicy::Order::kPriority, jobs, o.nodes,
                                      o.gpus_per_node);
  } else if (name == "gleaner") {
    p = std::make_unique<GleanerPolicy>(jobs, o);
  } else {
    return core::InvalidArgument("no replay policy \"" + name + "\"; expected one of " +
                                 kReplayPolicyNames);
  }
  return p;
}

}  // namespace gleaner::sim
