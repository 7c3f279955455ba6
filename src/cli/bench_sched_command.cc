#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "cli/bench_command.h"
#include "cli/exit_codes.h"
#include "cli/run_outputs.h"
#include "sched/scheduler.h"
#include "sched/synthetic_cluster.h"

namespace gleaner::cli {
namespace {

using sched::Action;

const core::TimePoint kT0 = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

struct Measured {
  std::vector<double> event_us;       // latency of each timed Handle call
  int64_t placements = 0;             // jobs started (or, with --preempt, preemption decisions)
  std::vector<double> full_tick_us;   // Ticks with every GPU taken
  std::vector<double> quota_tick_us;  // Ticks with GPUs free and the backlog held by quotas
  core::Status status;
};

template <typename F>
double TimeUs(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
      .count();
}

int64_t Count(const std::vector<Action>& actions) {
  return std::count_if(actions.begin(), actions.end(),
                       [](const Action& a) { return std::holds_alternative<sched::StartJob>(a); });
}

sched::JobRequest BenchJob(const BenchSchedOptions& o, sched::JobId id,
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
Measured Placements(const BenchSchedOptions& o) {
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
  m.event_us.reserve(static_cast<size_t>(o.nodes) * static_cast<size_t>(o.gpus_per_node));
  for (int n = 0; n < o.nodes; ++n) {
    for (int i = 0; i < o.gpus_per_node; ++i) {
      core::Result<std::vector<Action>> r = std::vector<Action>{};
      m.event_us.push_back(TimeUs([&] {
        r = s.Handle(sched::GpuVerdictChanged{sched::SyntheticGpuUuid(n, i), true, "idle", {}},
                     kT0 + core::Seconds(1));
      }));
      if (!r.ok()) {
        m.status = r.status();
        return m;
      }
      m.placements += Count(*r);
    }
  }
  m.status = TimeTicks(s, kT0 + core::Seconds(1), o.ticks, &m.full_tick_us);
  return m;
}

// Every project may hold at most a seventh of 90 % of the GPUs: the rest
// stay free while the backlog waits, so each Tick re-keys the queue and its
// pass offers the free GPUs to every group of waiting jobs.
core::Status QuotaTicks(const BenchSchedOptions& o, std::vector<double>* us) {
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
Measured Preemptions(const BenchSchedOptions& o) {
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
  m.event_us.reserve(static_cast<size_t>(decisions));
  for (int64_t k = 0; k < decisions; ++k) {
    const sched::JobId id = next++;
    core::Result<std::vector<Action>> r = std::vector<Action>{};
    m.event_us.push_back(TimeUs([&] {
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
      ++m.placements;
      if (auto gone = s.Handle(sched::JobFailed{p->job, "preempted"}, now); !gone.ok()) {
        m.status = gone.status();
        return m;
      }
    }
  }
  return m;
}

}  // namespace

int RunBenchSched(const BenchSchedOptions& o, std::ostream& out, std::ostream& err) {
  Measured m = o.preempt ? Preemptions(o) : Placements(o);
  if (m.status.ok() && !o.preempt) m.status = QuotaTicks(o, &m.quota_tick_us);
  if (!m.status.ok()) {
    err << "gleaner: the scheduler refused the synthetic cluster: " << m.status.ToString() << "\n";
    return kExitFailure;
  }
  const int64_t rss = PeakRssBytes();
  std::vector<double> us = m.event_us;
  std::sort(us.begin(), us.end());
  double total_us = 0;
  for (double u : us) total_us += u;
  const double rate = total_us > 0 ? static_cast<double>(m.placements) / (total_us / 1e6) : 0;
  const double p50 = us.empty() ? 0 : us[us.size() / 2];
  const double p99 = us.empty() ? 0 : us[std::min(us.size() - 1, us.size() * 99 / 100)];
  const char* what = o.preempt ? "preemption decisions" : "placements";
  const auto median_ms = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2] / 1000;
  };
  const auto max_ms = [](const std::vector<double>& v) {
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end()) / 1000;
  };
  if (o.json) {
    nlohmann::json doc;
    doc["nodes"] = o.nodes;
    doc["gpus_per_node"] = o.gpus_per_node;
    doc["pending"] = o.pending;
    doc["gang"] = o.gang;
    doc["preempt"] = o.preempt;
    doc["events"] = us.size();
    doc["placements"] = m.placements;
    doc["placements_per_s"] = rate;
    doc["p50_us"] = p50;
    doc["p99_us"] = p99;
    doc["users"] = o.users;
    doc["full_tick"] = {{"ticks", m.full_tick_us.size()},
                        {"p50_ms", median_ms(m.full_tick_us)},
                        {"max_ms", max_ms(m.full_tick_us)}};
    doc["quota_tick"] = {{"ticks", m.quota_tick_us.size()},
                         {"p50_ms", median_ms(m.quota_tick_us)},
                         {"max_ms", max_ms(m.quota_tick_us)}};
    doc["rss_bytes"] = rss;
    out << doc.dump(2) << "\n";
    return kExitOk;
  }
  char line[200];
  std::snprintf(line, sizeof line,
                "gleaner bench sched: %d nodes x %d GPUs, %d pending%s%s\n"
                "%lld %s in %zu events: %.0f/s; latency per event p50 %.1f us, p99 %.1f us; "
                "peak memory %.1f MiB\n",
                o.nodes, o.gpus_per_node, o.pending, o.gang ? ", gangs of 2/4/8" : "",
                o.preempt ? ", critical jobs preempting" : "", static_cast<long long>(m.placements),
                what, us.size(), rate, p50, p99, static_cast<double>(rss) / (1 << 20));
  out << line;
  if (!m.full_tick_us.empty() || !m.quota_tick_us.empty()) {
    std::snprintf(line, sizeof line,
                  "ticks (%d users): cluster full p50 %.2f ms, max %.2f ms; GPUs free, backlog "
                  "held by quotas p50 %.2f ms, max %.2f ms\n",
                  o.users, median_ms(m.full_tick_us), max_ms(m.full_tick_us),
                  median_ms(m.quota_tick_us), max_ms(m.quota_tick_us));
    out << line;
  }
  return kExitOk;
}

}  // namespace gleaner::cli
