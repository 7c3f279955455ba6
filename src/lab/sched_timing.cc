#include "lab/sched_timing.h"

#include <algorithm>
#include <random>
#include <string>
#include <variant>

#include "core/enum_names.h"
#include "sched/scheduler.h"
#include "sched/synthetic_cluster.h"

namespace gleaner::lab {
namespace {

using sched::Action;
using sched::PriorityClass;

constexpr auto kScenarioNames = core::MakeEnumNames<SchedScenario>(
    {
        {SchedScenario::kVerdicts, "verdicts"},
        {SchedScenario::kNodesAdded, "nodes-added"},
        {SchedScenario::kPreempt, "preempt"},
        {SchedScenario::kGangs, "gangs"},
        {SchedScenario::kMultiNodeGangs, "multi-node-gangs"},
        {SchedScenario::kPreemptGangs, "preempt-gangs"},
    },
    "verdicts");

const core::TimePoint kT0 = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

int64_t Count(const std::vector<Action>& actions) {
  return std::count_if(actions.begin(), actions.end(),
                       [](const Action& a) { return std::holds_alternative<sched::StartJob>(a); });
}

int64_t GpuCount(const SchedTimingSetup& o) { return int64_t{o.nodes} * o.gpus_per_node; }

sched::JobRequest BenchJob(const SchedTimingSetup& o, sched::JobId id,
                           PriorityClass c = PriorityClass::kNormal) {
  const int sizes[] = {2, 4, 8};
  const int gpus = o.gang ? std::min(sizes[id % 3], o.gpus_per_node) : 1;
  return sched::SyntheticJob(id, gpus, c, o.users);
}

// `event` handled at `at`; its latency goes into `t` where one is given.
core::Result<std::vector<Action>> Handle(sched::Scheduler& s, const sched::Event& event,
                                         core::TimePoint at, SchedTiming* t = nullptr) {
  core::Result<std::vector<Action>> r = std::vector<Action>{};
  if (t == nullptr) return s.Handle(event, at);
  t->event_us.push_back(TimeUs([&] { r = s.Handle(event, at); }));
  return r;
}

// The nodes, in racks of 40 where `racks`.
core::Status AddNodes(sched::Scheduler& s, const SchedTimingSetup& o, bool lendable,
                      bool racks = false) {
  for (int n = 0; n < o.nodes; ++n) {
    sched::NodeSpec node = sched::SyntheticNode(n, o.gpus_per_node, lendable);
    if (racks) node.rack = "rack-" + std::to_string(n / 40);
    GLEANER_RETURN_IF_ERROR(Handle(s, sched::NodeAdded{node}, kT0).status());
  }
  return core::Status::Ok();
}

core::Status SubmitPending(sched::Scheduler& s, const SchedTimingSetup& o) {
  for (int id = 1; id <= o.pending; ++id) {
    GLEANER_RETURN_IF_ERROR(Handle(s, sched::JobSubmitted{BenchJob(o, id)}, kT0).status());
  }
  return core::Status::Ok();
}

// `count` Ticks 30 s apart after `from`, each timed.
core::Status TimeTicks(sched::Scheduler& s, core::TimePoint from, int count,
                       std::vector<double>* us) {
  for (int k = 1; k <= count; ++k) {
    core::Result<std::vector<Action>> r = std::vector<Action>{};
    us->push_back(TimeUs([&] { r = s.Handle(sched::Tick{}, from + core::Seconds(30 * k)); }));
    GLEANER_RETURN_IF_ERROR(r.status());
  }
  return core::Status::Ok();
}

// Every project may hold at most a seventh of 90 % of the GPUs: the rest
// stay free while the backlog waits, so each Tick re-keys the queue and its
// pass offers the free GPUs to every group of waiting jobs.
core::Status QuotaTicks(const SchedTimingSetup& o, std::vector<double>* us) {
  sched::SchedulerConfig config;
  for (int p = 0; p < 7; ++p) {
    config.projects["p" + std::to_string(p)].borrow_limit_gpus =
        static_cast<int>(std::max<int64_t>(8, GpuCount(o) * 9 / 10 / 7));
  }
  sched::Scheduler s(config);
  GLEANER_RETURN_IF_ERROR(AddNodes(s, o, true));
  GLEANER_RETURN_IF_ERROR(SubmitPending(s, o));
  return TimeTicks(s, kT0, o.ticks, us);
}

core::Status Verdicts(const SchedTimingSetup& o, SchedTiming* t) {
  sched::Scheduler s;
  GLEANER_RETURN_IF_ERROR(AddNodes(s, o, false));
  GLEANER_RETURN_IF_ERROR(SubmitPending(s, o));
  t->event_us.reserve(static_cast<size_t>(GpuCount(o)));
  for (int n = 0; n < o.nodes; ++n) {
    for (int i = 0; i < o.gpus_per_node; ++i) {
      GLEANER_ASSIGN_OR_RETURN(
          const std::vector<Action> actions,
          Handle(s, sched::GpuVerdictChanged{sched::SyntheticGpuUuid(n, i), true, "idle", {}},
                 kT0 + core::Seconds(1), t));
      t->decisions += Count(actions);
    }
  }
  GLEANER_RETURN_IF_ERROR(TimeTicks(s, kT0 + core::Seconds(1), o.ticks, &t->full_tick_us));
  return QuotaTicks(o, &t->quota_tick_us);
}

core::Status NodesAdded(const SchedTimingSetup& o, SchedTiming* t) {
  sched::Scheduler s;
  GLEANER_RETURN_IF_ERROR(SubmitPending(s, o));
  for (int n = 0; n < o.nodes; ++n) {
    GLEANER_ASSIGN_OR_RETURN(
        const std::vector<Action> actions,
        Handle(s, sched::NodeAdded{sched::SyntheticNode(n, o.gpus_per_node, true)}, kT0, t));
    t->decisions += Count(actions);
  }
  return core::Status::Ok();
}

// Each preempted victim reports leaving (untimed), so the critical job
// starts. At most one decision per GPU: after that nothing is left to take.
core::Status Preempt(const SchedTimingSetup& o, SchedTiming* t) {
  sched::SchedulerConfig config;
  config.min_runtime = core::Seconds(60);
  sched::Scheduler s(config);
  GLEANER_RETURN_IF_ERROR(AddNodes(s, o, true));
  sched::JobId next = 1;
  for (int64_t k = 0; k < GpuCount(o); ++k) {
    GLEANER_RETURN_IF_ERROR(Handle(s,
                                   sched::JobSubmitted{sched::SyntheticJob(
                                       next++, 1, PriorityClass::kOpportunistic, o.users)},
                                   kT0)
                                .status());
  }
  const core::TimePoint now = kT0 + core::Seconds(3600);
  const int64_t decisions = std::min<int64_t>(o.pending, GpuCount(o));
  t->event_us.reserve(static_cast<size_t>(decisions));
  for (int64_t k = 0; k < decisions; ++k) {
    GLEANER_ASSIGN_OR_RETURN(const std::vector<Action> actions,
                             Handle(s,
                                    sched::JobSubmitted{sched::SyntheticJob(
                                        next++, 1, PriorityClass::kCritical, o.users)},
                                    now, t));
    for (const Action& a : actions) {
      const auto* p = std::get_if<sched::PreemptJob>(&a);
      if (p == nullptr) continue;
      ++t->decisions;
      GLEANER_RETURN_IF_ERROR(Handle(s, sched::JobFailed{p->job, "preempted"}, now).status());
    }
  }
  return core::Status::Ok();
}

// Every GPU given a single-GPU job of `c`; then those `ends(job)` picks
// end. Returns the next free job id.
template <typename Ends>
core::Result<sched::JobId> FillThenEnd(sched::Scheduler& s, const SchedTimingSetup& o,
                                       PriorityClass c, Ends ends) {
  sched::JobId next = 1;
  for (int64_t k = 0; k < GpuCount(o); ++k) {
    GLEANER_RETURN_IF_ERROR(
        Handle(s, sched::JobSubmitted{sched::SyntheticJob(next++, 1, c, o.users)}, kT0).status());
  }
  for (sched::JobId id = 1; id < next; ++id) {
    if (ends(id)) GLEANER_RETURN_IF_ERROR(Handle(s, sched::JobFinished{id}, kT0).status());
  }
  return next;
}

// A gang is submitted (timed) and, once placed, ended (untimed), so that
// each submit meets the same cluster.
core::Status TimeGangs(sched::Scheduler& s, const SchedTimingSetup& o, sched::JobId next, int nodes,
                       SchedTiming* t) {
  for (int k = 0; k < o.events; ++k) {
    sched::JobRequest gang = sched::SyntheticJob(next++, nodes > 1 ? o.gpus_per_node : o.gang_size,
                                                 PriorityClass::kNormal, o.users);
    gang.nodes = nodes;
    GLEANER_ASSIGN_OR_RETURN(const std::vector<Action> actions,
                             Handle(s, sched::JobSubmitted{gang}, kT0, t));
    if (Count(actions) == 0) {
      return core::FailedPrecondition("a gang found no room: give more --nodes");
    }
    ++t->decisions;
    GLEANER_RETURN_IF_ERROR(Handle(s, sched::JobFinished{gang.id}, kT0).status());
  }
  return core::Status::Ok();
}

core::Status Gangs(const SchedTimingSetup& o, SchedTiming* t) {
  if (o.gang_size > o.gpus_per_node) {
    return core::InvalidArgument("--gang-size " + std::to_string(o.gang_size) +
                                 " is more than a node's " + std::to_string(o.gpus_per_node) +
                                 " GPUs");
  }
  sched::Scheduler s;
  GLEANER_RETURN_IF_ERROR(AddNodes(s, o, true));
  std::mt19937 rng(7);
  GLEANER_ASSIGN_OR_RETURN(
      const sched::JobId next,
      FillThenEnd(s, o, PriorityClass::kNormal, [&](sched::JobId) { return rng() % 2 == 0; }));
  return TimeGangs(s, o, next, 1, t);
}

core::Status MultiNodeGangs(const SchedTimingSetup& o, SchedTiming* t) {
  sched::Scheduler s;
  GLEANER_RETURN_IF_ERROR(AddNodes(s, o, true, true));
  std::mt19937 rng(7);
  GLEANER_ASSIGN_OR_RETURN(
      const sched::JobId next, FillThenEnd(s, o, PriorityClass::kNormal, [&](sched::JobId id) {
        const sched::NodeIndex n = *s.cluster().FindNode(s.Allocation(id)->node);
        return n % 10 == 0 || rng() % 2 == 0;
      }));
  return TimeGangs(s, o, next, o.gang_size, t);
}

core::Status PreemptGangs(const SchedTimingSetup& o, SchedTiming* t) {
  sched::SchedulerConfig config;
  config.min_runtime = core::Seconds(60);
  sched::Scheduler s(config);
  GLEANER_RETURN_IF_ERROR(AddNodes(s, o, true));
  const int half = o.gpus_per_node / 2;
  const int first_free_node = o.nodes - o.nodes / 5;
  GLEANER_ASSIGN_OR_RETURN(
      sched::JobId next, FillThenEnd(s, o, PriorityClass::kOpportunistic, [&](sched::JobId id) {
        const auto a = s.Allocation(id);
        return static_cast<int>(*s.cluster().FindNode(a->node)) >= first_free_node &&
               a->gpu_indices[0] >= half;
      }));
  const core::TimePoint now = kT0 + core::Seconds(3600);
  for (int k = 0; k < o.events; ++k) {
    const sched::JobId gang = next++;
    GLEANER_ASSIGN_OR_RETURN(const std::vector<Action> actions,
                             Handle(s,
                                    sched::JobSubmitted{sched::SyntheticJob(
                                        gang, o.gpus_per_node, PriorityClass::kCritical, o.users)},
                                    now, t));
    const auto victims = std::count_if(actions.begin(), actions.end(), [](const Action& a) {
      return std::holds_alternative<sched::PreemptJob>(a);
    });
    // Each decision on a cluster as full as the first: half a node's jobs
    // preempted, until the half-free nodes run out.
    if (victims != half) {
      return core::FailedPrecondition("a critical gang preempted " + std::to_string(victims) +
                                      " jobs, not half a node's " + std::to_string(half) +
                                      ": at most a fifth of --nodes --events");
    }
    ++t->decisions;
    GLEANER_RETURN_IF_ERROR(Handle(s, sched::JobCancelled{gang}, now).status());
  }
  return core::Status::Ok();
}

core::Status Time(const SchedTimingSetup& o, SchedTiming* t) {
  switch (o.scenario) {
    case SchedScenario::kVerdicts:
      return Verdicts(o, t);
    case SchedScenario::kNodesAdded:
      return NodesAdded(o, t);
    case SchedScenario::kPreempt:
      return Preempt(o, t);
    case SchedScenario::kGangs:
      return Gangs(o, t);
    case SchedScenario::kMultiNodeGangs:
      return MultiNodeGangs(o, t);
    case SchedScenario::kPreemptGangs:
      return PreemptGangs(o, t);
  }
  return core::InvalidArgument("unknown scenario");
}

}  // namespace

std::string_view SchedScenarioName(SchedScenario s) { return kScenarioNames.Name(s); }
std::string_view SchedScenarioList() {
  static const std::string list = kScenarioNames.List();
  return list;
}
core::Result<SchedScenario> ParseSchedScenario(std::string_view name) {
  if (const auto s = kScenarioNames.Parse(name)) return *s;
  return core::InvalidArgument("unknown scenario \"" + std::string(name) + "\"; expected " +
                               std::string(SchedScenarioList()));
}

SchedSummary Summarize(const SchedTiming& timing) {
  const auto sorted = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  const auto at = [](const std::vector<double>& v, size_t i) {
    return v.empty() ? 0.0 : v[std::min(v.size() - 1, i)];
  };
  const std::vector<double> us = sorted(timing.event_us);
  const std::vector<double> full = sorted(timing.full_tick_us);
  const std::vector<double> quota = sorted(timing.quota_tick_us);
  double total_us = 0;
  for (double u : us) total_us += u;
  SchedSummary s;
  s.decisions_per_s = total_us > 0 ? static_cast<double>(timing.decisions) / (total_us / 1e6) : 0;
  s.p50_us = at(us, us.size() / 2);
  s.p99_us = at(us, us.size() * 99 / 100);
  s.full_tick_p50_ms = at(full, full.size() / 2) / 1000;
  s.full_tick_max_ms = at(full, full.size()) / 1000;
  s.quota_tick_p50_ms = at(quota, quota.size() / 2) / 1000;
  s.quota_tick_max_ms = at(quota, quota.size()) / 1000;
  return s;
}

std::string_view DecisionsName(SchedScenario s) {
  switch (s) {
    case SchedScenario::kPreempt:
    case SchedScenario::kPreemptGangs:
      return "preemption decisions";
    case SchedScenario::kGangs:
    case SchedScenario::kMultiNodeGangs:
      return "gangs placed";
    case SchedScenario::kVerdicts:
    case SchedScenario::kNodesAdded:
      break;
  }
  return "placements";
}

core::Result<SchedTiming> TimeScheduler(const SchedTimingSetup& setup) {
  SchedTiming t;
  GLEANER_RETURN_IF_ERROR(Time(setup, &t));
  return t;
}

}  // namespace gleaner::lab
