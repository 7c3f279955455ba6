#include "sched/wait_reason.h"

#include <algorithm>

#include "core/format.h"

namespace gleaner::sched {

std::string MilliAsGpus(int64_t milli) {
  std::string s = std::to_string(milli / 1000);
  if (const int64_t rest = milli % 1000; rest != 0) {
    std::string frac = std::to_string(rest);
    frac.insert(0, 3 - frac.size(), '0');
    while (frac.back() == '0') frac.pop_back();
    s += "." + frac;
  }
  return s;
}

std::string CpusText(int64_t milli) {
  return MilliAsGpus(milli) + (milli == 1000 ? " CPU" : " CPUs");
}

namespace {

bool HasShortfall(const NodeState& node, const JobRequest& job) {
  return !HostFits(node.capacity, node.free_cpu_milli, node.free_memory, job);
}

// "only 1.5 CPUs unclaimed", "only 3 GiB of memory unclaimed": what the
// node lacks of what the job asks.
std::string HostShortfall(const NodeState& node, const JobRequest& job) {
  std::string short_of;
  if (job.cpu_milli > 0 && node.capacity.cpu_milli > 0 && node.free_cpu_milli < job.cpu_milli) {
    short_of = CpusText(std::max<int64_t>(node.free_cpu_milli, 0));
  }
  if (job.memory.count() > 0 && node.capacity.memory.count() > 0 &&
      node.free_memory < static_cast<int64_t>(job.memory.count())) {
    short_of += (short_of.empty() ? "" : " and ") +
                core::FormatBytes(
                    core::Bytes(static_cast<uint64_t>(std::max<int64_t>(node.free_memory, 0)))) +
                " of memory";
  }
  return "only " + short_of + " unclaimed";
}

}  // namespace

std::string DescribeNeed(const JobRequest& job) {
  std::string s =
      job.fractional()
          ? MilliAsGpus(job.gpu_milli) + " of a GPU (" + std::to_string(job.gpu_milli) + " milli)"
      : job.elastic() ? std::to_string(job.gpus) + " to " + std::to_string(job.max_gpus) + " GPUs"
                      : std::to_string(job.gpus) + (job.gpus == 1 ? " GPU" : " GPUs");
  std::string constraints;
  if (!job.gpu_models.empty()) {
    constraints = "model ";
    for (size_t i = 0; i < job.gpu_models.size(); ++i) {
      constraints += (i ? " or " : "") + job.gpu_models[i];
    }
  }
  if (job.min_gpu_memory.count() > 0) {
    if (!constraints.empty()) constraints += ", ";
    constraints +=
        "at least " + MilliAsGpus(static_cast<int64_t>(job.min_gpu_memory.ToGiB() * 1000)) + " GiB";
  }
  if (job.cpu_milli > 0) {
    if (!constraints.empty()) constraints += ", ";
    constraints += CpusText(job.cpu_milli);
  }
  if (job.memory.count() > 0) {
    if (!constraints.empty()) constraints += ", ";
    constraints += core::FormatBytes(job.memory) + " of memory";
  }
  if (!constraints.empty()) s += " (" + constraints + ")";
  return s;
}

std::string DescribeWait(const WaitReason& why, const JobRequest& job,
                         const ClusterState& cluster) {
  const std::string project = job.project.empty() ? "(none)" : job.project;
  switch (why.kind) {
    case WaitReason::Kind::kNotConsidered:
      return "not considered yet: the next full pass (Tick) reaches it";
    case WaitReason::Kind::kNoNodes:
      return "no nodes in the cluster yet";
    case WaitReason::Kind::kQuota:
      return "project " + project + " is at its limit: " + MilliAsGpus(why.quota_used_milli) +
             " of " + MilliAsGpus(why.quota_limit_milli) + " GPUs in use; needs " +
             MilliAsGpus(job.total_milli()) + " more";
    case WaitReason::Kind::kAwaitingVictims:
      return "waiting for " + std::to_string(why.victims) +
             (why.victims == 1 ? " preempted job" : " preempted jobs") + " to leave its GPUs";
    case WaitReason::Kind::kNoFit:
      break;
  }
  if (job.spans_nodes()) {
    return "needs " + std::to_string(job.nodes) + " nodes with " + DescribeNeed(job) +
           " free each" + (job.one_rack ? " under one rack" : "") + "; " +
           std::to_string(why.fit.nodes_with_room) +
           (why.fit.nodes_with_room == 1 ? " node has" : " nodes have") + " that many now";
  }
  std::string s = "needs " + DescribeNeed(job) + (job.gpus > 1 ? " on one node" : "") + "; ";
  const std::string where =
      why.fit.node ? " on " + cluster.node(*why.fit.node).id.str() : std::string();
  if (job.fractional()) {
    if (why.fit.largest_share_milli > 0) {
      s += "the largest free share of a GPU is " + std::to_string(why.fit.largest_share_milli) +
           " milli";
    } else {
      s += "no shared GPU has room";
    }
    return s + " and no whole GPU is free";
  }
  if (why.fit.short_of_host) {
    // Rendered later than judged: the node may have room by now.
    const NodeState& node = cluster.node(*why.fit.short_of_host);
    if (!HasShortfall(node, job)) return s + "its CPUs or memory were claimed; room is freeing";
    return s + node.id.str() + " has the GPUs free but " + HostShortfall(node, job);
  }
  if (why.fit.largest_free == 0) return s + "no such GPU is free";
  return s + "the largest free set is " + std::to_string(why.fit.largest_free) + where;
}

}  // namespace gleaner::sched
