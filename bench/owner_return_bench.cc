// Owner return to GPU free: from the pass that first shows a foreign
// process on a lent GPU to the job's process gone and the job requeued,
// through `gleaner up`'s loop (daemon::LocalCluster), with a real job that
// exits on its checkpoint signal. Figures: docs/benchmarks.md.
#include <benchmark/benchmark.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/executor.h"
#include "daemon/local_cluster.h"
#include "store/sqlite_store.h"

namespace gleaner {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void BM_OwnerReturnToGpuFree(benchmark::State& state) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("gleaner-owner-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto store = std::move(store::SqliteStore::Open(dir + "/gleaner.db")).value();
  core::RealClock clock;
  agent::Executor executor(clock);
  daemon::LocalClusterOptions options;
  options.log_dir = dir;
  options.state_path = dir + "/agent-jobs.json";
  const cluster::Log quiet = [](const std::string&) {};
  daemon::LocalCluster cluster(*store, executor, clock, options, quiet);
  const core::GpuUuid gpu("GPU-00000000-0000-4000-8000-000000000000");
  // A pass with the GPU idle, and the one in which the owner's process
  // shows up beside the job.
  const auto pass_with = [&](observe::GpuState verdict, int foreign) {
    agent::HostPass pass;
    pass.at = clock.Now();
    observe::Verdict v;
    v.uuid = gpu;
    v.state = verdict;
    v.evidence.foreign_processes = foreign;
    v.evidence.reason = foreign ? "owner returned" : "idle";
    pass.verdicts.push_back(v);
    pass.snapshots.emplace_back();
    pass.snapshots.back().uuid = gpu;
    pass.samples.emplace_back();
    return pass;
  };
  const agent::HostPass idle = pass_with(observe::GpuState::kIdle, 0);
  const agent::HostPass owner_back = pass_with(observe::GpuState::kBusy, 1);

  sched::JobSpec spec;
  spec.command = {"sh", "-c", "trap 'exit 0' USR1; echo ready; while :; do sleep 0.01; done"};
  spec.working_dir = "/tmp";
  spec.checkpoint_signal = SIGUSR1;
  spec.grace = core::Seconds(30);
  std::vector<double> ms;
  for (auto _ : state) {
    const sched::JobId id = store->Submit("bench", geteuid(), spec, clock.Now())->id;
    // The scheduler may first try the job it requeued last time (cancelled
    // since): a few passes.
    for (int pass = 0; pass < 5 && store->Get(id)->state != store::JobState::kRunning; ++pass) {
      cluster.Act(idle, quiet);
    }
    if (store->Get(id)->state != store::JobState::kRunning) {
      state.SkipWithError("the job did not start");
      break;
    }
    const std::string out = dir + "/" + std::to_string(id) + ".out";
    while (Slurp(out).find("ready") == std::string::npos) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    const auto t0 = std::chrono::steady_clock::now();
    while (store->Get(id)->state != store::JobState::kQueued) cluster.Act(owner_back, quiet);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(elapsed);
    ms.push_back(elapsed * 1000);
    // Requeued: it is not to run again in the next iteration.
    store->Transition(id, store::JobState::kQueued, store::JobState::kCancelled, {})
        .status()
        .IgnoreError();
  }
  std::sort(ms.begin(), ms.end());
  state.counters["p50_ms"] = ms[ms.size() / 2];
  state.counters["p99_ms"] = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_OwnerReturnToGpuFree)->Iterations(50)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gleaner

BENCHMARK_MAIN();
