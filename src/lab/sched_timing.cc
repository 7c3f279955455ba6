#include "lab/sched_timing.h"

#include <algorithm>
#include <string>
#include <variant>

#include "sched/scheduler.h"
#include "sched/synthetic_cluster.h"

namespace gleaner::lab {
namespace {

using sched::Action;

// What one run measured, or why the scheduler refused it.
struct Measured {
  SchedTiming timing;
  core::Status status;
};

const core::TimePoint kT0 = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

int64_t Count(const std::vector<Action>& actions) {
  return std::count_if(actions.begin(), actions.end(),
                       [](const Action& a) { return std::holds_alternative<sched::StartJob>(a); });
}

sched::JobRequest BenchJob(const SchedTimingSetup& o, sched::JobId id,
                           sched::PriorityClass c = sched::PriorityClass::kNormal) {
  const int sizes[] = {2, 4, 8};
  const int gpus = o.gang ? std::min(sizes[id % 3], o.gpus_per_node) : 1;
  return sched::SyntheticJob(id, gpus, c, o.users);
}

// `count` Ticks 30 s apart after `from`, each timed.
core::Status TimeTicks(sched::Scheduler& s, core::TimePoint from, int count,
                       std::vector<double>* us) {
  for (int k = 1; k <= count; ++k) {
    core::Result<std::vector<Action>> r = std::vector<Action>{};
    us->push_back(TimeUs([&] { r = s.Handle(sched::Tick{}, from + core::Seconds(30 * k)); }));
    if (!r.ok()) return r.status();
  }
  return core::Status::Ok();
}

// Jobs wait; GPUs become lendable one verdict at a time (the harvesting
// daemon's case), and each verdict may start jobs. Gangs cycle through 2, 4
// and 8 GPUs (at most a node's worth).
Measured Placements(const SchedTimingSetup& o) {
  Measured m;
  sched::Scheduler s;
  for (int n = 0; n < o.nodes; ++n) {
    if (auto r = s.Handle(sched::NodeAdded{sched::SyntheticNode(n, o.gpus_per_node, false)}, kT0);
        !r.ok()) {
      m.status = r.status();
      return m;
    }
  }
  for (int id = 1; id <= o.pending; ++id) {
    if (auto r = s.Handle(sched::JobSubmitted{BenchJob(o, id)}, kT0); !r.ok()) {
      m.status = r.status();
      return m;
    }
  }
  m.timing.event_us.reserve(static_cast<size_t>(o.nodes) * static_cast<size_t>(o.gpus_per_node));
  for (int n = 0; n < o.nodes; ++n) {
    for (int i = 0; i < o.gpus_per_node; ++i) {
      core::Result<std::vector<Action>> r = std::vector<Action>{};
      m.timing.event_us.push_back(TimeUs([&] {
        r = s.Handle(sched::GpuVerdictChanged{sched::SyntheticGpuUuid(n, i), true, "idle", {}},
                     kT0 + core::Seconds(1));
      }));
      if (!r.ok()) {
        m.status = r.status();
        return m;
      }
      m.timing.decisions += Count(*r);
    }
  }
  m.status = TimeTicks(s, kT0 + core::Seconds(1), o.ticks, &m.timing.full_tick_us);
  return m;
}

// Every project may hold at most a seventh of 90 % of the GPUs: the rest
// stay free while the backlog waits, so each Tick re-keys the queue and its
// pass offers the free GPUs to every group of waiting jobs.
core::Status QuotaTicks(const SchedTimingSetup& o, std::vector<double>* us) {
  sched::SchedulerConfig config;
  const int64_t gpus = int64_t{o.nodes} * o.gpus_per_node;
  for (int p = 0; p < 7; ++p) {
    config.projects["p" + std::to_string(p)].borrow_limit_gpus =
        static_cast<int>(std::max<int64_t>(8, gpus * 9 / 10 / 7));
  }
  sched::Scheduler s(config);
  for (int n = 0; n < o.nodes; ++n) {
    GLEANER_RETURN_IF_ERROR(
        s.Handle(sched::NodeAdded{sched::SyntheticNode(n, o.gpus_per_node, true)}, kT0).status());
  }
  for (int id = 1; id <= o.pending; ++id) {
    GLEANER_RETURN_IF_ERROR(s.Handle(sched::JobSubmitted{BenchJob(o, id)}, kT0).status());
  }
  return TimeTicks(s, kT0, o.ticks, us);
}

// Every GPU runs an opportunistic single-GPU job past its protection; then
// critical jobs arrive one at a time (timed: the decision), each preempting
// one victim, which then reports its exit (untimed) so the critical job
// starts. At most one decision per GPU: after that nothing is left to take.
Measured Preemptions(const SchedTimingSetup& o) {
  Measured m;
  sched::SchedulerConfig config;
  config.min_runtime = core::Seconds(60);
  sched::Scheduler s(config);
  for (int n = 0; n < o.nodes; ++n) {
    if (auto r = s.Handle(sched::NodeAdded{sched::SyntheticNode(n, o.gpus_per_node, true)}, kT0);
        !r.ok()) {
      m.status = r.status();
      return m;
    }
  }
  const int64_t gpus = int64_t{o.nodes} * o.gpus_per_node;
  sched::JobId next = 1;
  for (int64_t k = 0; k < gpus; ++k) {
    if (auto r = s.Handle(sched::JobSubmitted{sched::SyntheticJob(
                              next++, 1, sched::PriorityClass::kOpportunistic, o.users)},
                          kT0);
        !r.ok()) {
      m.status = r.status();
      return m;
    }
  }
  const core::TimePoint now = kT0 + core::Seconds(3600);
  const int64_t decisions = std::min<int64_t>(o.pending, gpus);
  m.timing.event_us.reserve(static_cast<size_t>(decisions));
  for (int64_t k = 0; k < decisions; ++k) {
    const sched::JobId id = next++;
    core::Result<std::vector<Action>> r = std::vector<Action>{};
    m.timing.event_us.push_back(TimeUs([&] {
      r = s.Handle(
          sched::JobSubmitted{sched::SyntheticJob(id, 1, sched::PriorityClass::kCritical, o.users)},
          now);
    }));
    if (!r.ok()) {
      m.status = r.status();
      return m;
    }
    for (const Action& a : *r) {
      const auto* p = std::get_if<sched::PreemptJob>(&a);
      if (p == nullptr) continue;
      ++m.timing.decisions;
      if (auto gone = s.Handle(sched::JobFailed{p->job, "preempted"}, now); !gone.ok()) {
        m.status = gone.status();
        return m;
      }
    }
  }
  return m;
}

}  // namespace

core::Result<SchedTiming> TimeScheduler(const SchedTimingSetup& setup) {
  Measured m = setup.preempt ? Preemptions(setup) : Placements(setup);
  if (m.status.ok() && !setup.preempt) m.status = QuotaTicks(setup, &m.timing.quota_tick_us);
  if (!m.status.ok()) return m.status;
  return std::move(m.timing);
}

}  // namespace gleaner::lab
