#include "sim/gleaner_policy.h"

#include "sched/synthetic_cluster.h"

namespace gleaner::sim {
namespace {

core::TimePoint At(int64_t s) { return core::FromUnixMicros(0) + core::Seconds(s); }

sched::JobId IdOf(int job) { return static_cast<sched::JobId>(job) + 1; }

// Trace priorities (openb's QoS levels 0-3) spread over the Scheduler's
// numeric range, within the normal class so that nothing is preempted. The
// multifactor ordering scores priority -1000..1000 as 0..1000 points and age
// 1000 points per 24 h, so one level (300) is 150 points, worth 3.6 h of
// waiting: a higher level goes first unless the lower job waited that much
// longer per level (the guard against starvation).
constexpr int kPriorityStep = 300;

sched::SchedulerConfig ConfigOf(const ReplayPolicyOptions& o) {
  sched::SchedulerConfig c;
  c.model_price = o.model_price;
  c.cost_aware = o.cost_aware;
  return c;
}

// Node `n` of the given model: "node-<n>" with GPUs "GPU-<n>-<i>", as
// SyntheticNode names them.
sched::NodeSpec NodeOfModel(int n, const ReplayNode& node) {
  sched::NodeSpec spec = sched::SyntheticNode(n, node.gpus, true);
  for (sched::GpuSpec& g : spec.gpus) {
    g.model = node.model;
    g.nvlink_island = -1;
  }
  return spec;
}

}  // namespace

GleanerPolicy::GleanerPolicy(const std::vector<TraceJob>& jobs, const ReplayPolicyOptions& o)
    : jobs_(jobs),
      gpus_per_node_(o.gpus_per_node),
      tick_s_(o.gleaner_tick_s),
      scheduler_(ConfigOf(o)),
      model_price_(o.model_price),
      prices_(jobs.size()) {
  if (o.models.empty()) {
    for (int n = 0; n < o.nodes && setup_.ok(); ++n) {
      setup_ = Handle(sched::NodeAdded{sched::SyntheticNode(n, gpus_per_node_, true)}, 0);
    }
    return;
  }
  for (size_t n = 0; n < o.models.size() && setup_.ok(); ++n) {
    setup_ = Handle(sched::NodeAdded{NodeOfModel(static_cast<int>(n), o.models[n])}, 0);
  }
}

core::Status GleanerPolicy::Handle(const sched::Event& event, int64_t now_s) {
  auto actions = scheduler_.Handle(event, At(now_s));
  if (!actions.ok()) return actions.status();
  for (const sched::Action& a : *actions) {
    if (const auto* start = std::get_if<sched::StartJob>(&a)) {
      const int job = static_cast<int>(start->job - 1);
      starts_.push_back(job);
      if (!start->gang.empty()) ++gangs_started_;
      if (model_price_) {
        const sched::ClusterState& cluster = scheduler_.cluster();
        const sched::GpuSpec& gpu = cluster.gpu(*cluster.FindGpu(start->gpus.front())).spec;
        prices_[static_cast<size_t>(job)] = model_price_(gpu.model, gpu.memory);
      }
      continue;
    }
    // Nothing in a plain replay gives grounds to preempt (one class, no
    // quotas or reservations) and every job fits the cluster (the loop
    // checked), so any other action means the two disagree about the rules.
    return core::FailedPrecondition("the scheduler asked to " + sched::ToString(a) +
                                    ", which a plain replay cannot carry out");
  }
  return core::Status::Ok();
}

core::Status GleanerPolicy::Submitted(int job, int64_t now_s) {
  GLEANER_RETURN_IF_ERROR(setup_);
  sched::JobRequest req;
  req.id = IdOf(job);
  req.gpus = jobs_[static_cast<size_t>(job)].gpus;
  if (req.gpus > gpus_per_node_) {
    // A gang over as few nodes as hold it, its GPUs spread evenly.
    req.nodes = (req.gpus + gpus_per_node_ - 1) / gpus_per_node_;
    req.gpus = (req.gpus + req.nodes - 1) / req.nodes;
  }
  req.priority = jobs_[static_cast<size_t>(job)].priority * kPriorityStep;
  req.gpu_models = jobs_[static_cast<size_t>(job)].gpu_models;
  return Handle(sched::JobSubmitted{std::move(req)}, now_s);
}

core::Status GleanerPolicy::Finished(int job, int64_t now_s) {
  return Handle(sched::JobFinished{IdOf(job)}, now_s);
}

core::Status GleanerPolicy::Dispatch(int64_t now_s, std::vector<int>* started) {
  GLEANER_RETURN_IF_ERROR(setup_);
  if (scheduler_.pending_count() > 0 && now_s >= last_tick_s_ + tick_s_) {
    GLEANER_RETURN_IF_ERROR(Handle(sched::Tick{}, now_s));
    last_tick_s_ = now_s;
  }
  started->insert(started->end(), starts_.begin(), starts_.end());
  starts_.clear();
  return core::Status::Ok();
}

std::optional<int64_t> GleanerPolicy::NextWakeup(int64_t now_s) const {
  if (scheduler_.pending_count() == 0) return std::nullopt;
  const int64_t due = last_tick_s_ + tick_s_;
  return due > now_s ? due : now_s + tick_s_;
}

}  // namespace gleaner::sim
