// The scheduler at cluster scale: 5,000 nodes x 8 GPUs (NVSwitch: one
// NVLink island per node) with 100,000 pending jobs. Each figure is the
// latency of Scheduler::Handle for one event, measured around the call;
// counters give placements (or decisions) per second and p50/p99.
// Figures: docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <random>

#include "lab/sched_timing.h"
#include "sched/scheduler.h"
#include "sched/synthetic_cluster.h"

namespace gleaner::sched {
namespace {

constexpr int kNodes = 5000;
constexpr int kGpusPerNode = 8;
const core::TimePoint kT0 = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

core::GpuUuid Gpu(int node, int i) { return SyntheticGpuUuid(node, i); }
NodeSpec Node(int n, bool lendable) { return SyntheticNode(n, kGpusPerNode, lendable); }
JobRequest Job(JobId id, int gpus, PriorityClass c = PriorityClass::kNormal) {
  return SyntheticJob(id, gpus, c);
}

void Check(const core::Result<std::vector<Action>>& r) {
  if (!r.ok()) {
    std::fprintf(stderr, "sched_bench: %s\n", r.status().ToString().c_str());
    std::abort();
  }
}

using lab::TimeUs;  // microseconds of one Handle call; the caller counts the actions

void Report(benchmark::State& state, std::vector<double> us, int64_t decisions,
            const char* rate_name) {
  std::sort(us.begin(), us.end());
  double total = 0;
  for (double u : us) total += u;
  state.counters[rate_name] = static_cast<double>(decisions) / (total / 1e6);
  state.counters["p50_us"] = us[us.size() / 2];
  state.counters["p99_us"] = us[us.size() * 99 / 100];
  state.counters["events"] = static_cast<double>(us.size());
  state.SetIterationTime(total / 1e6);
}

// 100,000 single-GPU jobs wait; GPUs become lendable one verdict at a time
// (the harvesting daemon's case) and each verdict starts the next job:
// 40,000 placements, each an event with its own latency.
void BM_SingleGpuPlacementPerVerdict(benchmark::State& state) {
  for (auto _ : state) {
    Scheduler s;
    for (int n = 0; n < kNodes; ++n) Check(s.Handle(NodeAdded{Node(n, false)}, kT0));
    for (JobId id = 1; id <= 100'000; ++id) Check(s.Handle(JobSubmitted{Job(id, 1)}, kT0));
    std::vector<double> us;
    us.reserve(kNodes * kGpusPerNode);
    int64_t placed = 0;
    for (int n = 0; n < kNodes; ++n) {
      for (int i = 0; i < kGpusPerNode; ++i) {
        core::Result<std::vector<Action>> r = std::vector<Action>{};
        us.push_back(TimeUs([&] {
          r = s.Handle(GpuVerdictChanged{Gpu(n, i), true, "idle", {}}, kT0 + core::Seconds(1));
        }));
        Check(r);
        placed += static_cast<int64_t>(r->size());
      }
    }
    if (placed != kNodes * kGpusPerNode) state.SkipWithError("not every GPU was filled");
    Report(state, std::move(us), placed, "placements_per_s");
  }
}
BENCHMARK(BM_SingleGpuPlacementPerVerdict)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// The same 100,000 jobs waiting for nodes; nodes register one at a time
// (agents coming up) and each registration starts 8 jobs: 40,000
// placements in 5,000 events.
void BM_SingleGpuPlacementPerNodeAdded(benchmark::State& state) {
  for (auto _ : state) {
    Scheduler s;
    for (JobId id = 1; id <= 100'000; ++id) Check(s.Handle(JobSubmitted{Job(id, 1)}, kT0));
    std::vector<double> us;
    int64_t placed = 0;
    for (int n = 0; n < kNodes; ++n) {
      core::Result<std::vector<Action>> r = std::vector<Action>{};
      us.push_back(TimeUs([&] { r = s.Handle(NodeAdded{Node(n, true)}, kT0); }));
      Check(r);
      placed += static_cast<int64_t>(r->size());
    }
    if (placed != kNodes * kGpusPerNode) state.SkipWithError("not every GPU was filled");
    Report(state, std::move(us), placed, "placements_per_s");
  }
}
BENCHMARK(BM_SingleGpuPlacementPerNodeAdded)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// Gangs of `state.range(0)` GPUs on one node, into a cluster half full of
// single-GPU jobs scattered at random (so free sets have every size): each
// iteration submits one gang (placement) and ends it again (untimed).
void BM_GangPlacement(benchmark::State& state) {
  const int gang = static_cast<int>(state.range(0));
  Scheduler s;
  for (int n = 0; n < kNodes; ++n) Check(s.Handle(NodeAdded{Node(n, true)}, kT0));
  std::mt19937 rng(7);
  JobId next = 1;
  // Fill everything with single-GPU jobs, then end a random half of them.
  for (int k = 0; k < kNodes * kGpusPerNode; ++k)
    Check(s.Handle(JobSubmitted{Job(next++, 1)}, kT0));
  for (JobId id = 1; id < next; ++id) {
    if (rng() % 2 == 0) Check(s.Handle(JobFinished{id}, kT0));
  }
  std::vector<double> us;
  int64_t placed = 0;
  for (auto _ : state) {
    const JobId id = next++;
    core::Result<std::vector<Action>> r = std::vector<Action>{};
    us.push_back(TimeUs([&] { r = s.Handle(JobSubmitted{Job(id, gang)}, kT0); }));
    Check(r);
    placed += static_cast<int64_t>(r->size());
    if (r->size() == 1) Check(s.Handle(JobFinished{id}, kT0));
  }
  if (placed != static_cast<int64_t>(us.size())) state.SkipWithError("a gang found no node");
  Report(state, std::move(us), placed, "placements_per_s");
}
BENCHMARK(BM_GangPlacement)->Arg(2)->Arg(4)->Arg(8)->UseManualTime()->Iterations(20'000);

// Gangs of `state.range(0)` nodes x 8 GPUs on 5,000 nodes in racks of 40:
// every node runs single-GPU jobs but every tenth, wholly free, and half the
// jobs elsewhere have ended (so partly free nodes of every size surround
// the 500 whole ones the gang may take). Each iteration submits one gang
// (placement over every node with room, racks compared) and ends it again
// (untimed).
void BM_MultiNodeGangPlacement(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  Scheduler s;
  for (int n = 0; n < kNodes; ++n) {
    NodeSpec node = Node(n, true);
    node.rack = "rack-" + std::to_string(n / 40);
    Check(s.Handle(NodeAdded{node}, kT0));
  }
  std::mt19937 rng(7);
  JobId next = 1;
  for (int k = 0; k < kNodes * kGpusPerNode; ++k)
    Check(s.Handle(JobSubmitted{Job(next++, 1)}, kT0));
  for (JobId id = 1; id < next; ++id) {
    const NodeIndex n = *s.cluster().FindNode(s.Allocation(id)->node);
    if (n % 10 == 0 || rng() % 2 == 0) Check(s.Handle(JobFinished{id}, kT0));
  }
  std::vector<double> us;
  int64_t placed = 0;
  for (auto _ : state) {
    JobRequest gang = Job(next++, kGpusPerNode);
    gang.nodes = nodes;
    core::Result<std::vector<Action>> r = std::vector<Action>{};
    us.push_back(TimeUs([&] { r = s.Handle(JobSubmitted{gang}, kT0); }));
    Check(r);
    placed += static_cast<int64_t>(r->size());
    if (r->size() == 1) Check(s.Handle(JobFinished{gang.id}, kT0));
  }
  if (placed != static_cast<int64_t>(us.size())) state.SkipWithError("a gang found no nodes");
  Report(state, std::move(us), placed, "placements_per_s");
}
BENCHMARK(BM_MultiNodeGangPlacement)->Arg(2)->Arg(8)->Arg(32)->UseManualTime()->Iterations(2'000);

// Preemption at 90 % full: 40,000 GPUs run opportunistic single-GPU jobs
// past their protection, then GPUs 4..7 of the last 1,000 nodes free up
// (4,000 free, in sets of 4). A critical 8-GPU gang fits nowhere, so each
// submit searches for victims (nodes with the most free GPUs first, 64
// workable nodes compared) and preempts 4 jobs of one node. Untimed, the
// gang is cancelled; its victims never report leaving, so they keep their
// GPUs and the next gang has to pick another node: 1,000 decisions, each
// on a cluster as full as the first.
void BM_PreemptionDecision(benchmark::State& state) {
  SchedulerConfig config;
  config.min_runtime = core::Seconds(60);
  Scheduler s(config);
  for (int n = 0; n < kNodes; ++n) Check(s.Handle(NodeAdded{Node(n, true)}, kT0));
  JobId next = 1;
  for (int k = 0; k < kNodes * kGpusPerNode; ++k) {
    Check(s.Handle(JobSubmitted{Job(next++, 1, PriorityClass::kOpportunistic)}, kT0));
  }
  for (JobId id = 1; id < next; ++id) {
    const auto a = s.Allocation(id);
    if (*s.cluster().FindNode(a->node) >= 4000 && a->gpu_indices[0] >= 4) {
      Check(s.Handle(JobFinished{id}, kT0));
    }
  }
  if (s.cluster().free_milli() != 4'000'000) {
    state.SkipWithError("the cluster is not 90 % full");
    return;
  }
  const core::TimePoint now = kT0 + core::Seconds(3600);
  std::vector<double> us;
  int64_t decisions = 0;
  for (auto _ : state) {
    const JobId gang = next++;
    core::Result<std::vector<Action>> r = std::vector<Action>{};
    us.push_back(
        TimeUs([&] { r = s.Handle(JobSubmitted{Job(gang, 8, PriorityClass::kCritical)}, now); }));
    Check(r);
    if (r->size() != 4 || !std::holds_alternative<PreemptJob>(r->front())) {
      state.SkipWithError("expected 4 victims on one half-free node");
      break;
    }
    ++decisions;
    Check(s.Handle(JobCancelled{gang}, now));
  }
  if (!us.empty()) Report(state, std::move(us), decisions, "decisions_per_s");
}
BENCHMARK(BM_PreemptionDecision)->UseManualTime()->Iterations(1'000);

}  // namespace
}  // namespace gleaner::sched

BENCHMARK_MAIN();
