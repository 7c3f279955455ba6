// Owner return to GPU free: from the pass that first shows a foreign
// process on a lent GPU to the job's process gone and the job requeued,
// with a real job that exits on its checkpoint signal. Figures:
// docs/benchmarks.md.
#include <benchmark/benchmark.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/harvester.h"
#include "gpu/fake_backend.h"
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
  auto scenario =
      gpu::ParseScenario(R"({"gpus": [{"name": "A", "memory_total_mib": 1000}]})", "one");
  agent::ProcfsInspector procfs;
  auto backend = std::move(gpu::FakeBackend::Create(std::move(scenario).value(), clock)).value();
  agent::Sampler sampler(*backend, procfs, nullptr, clock, {});
  agent::Executor executor(clock);
  agent::Harvester harvester(sampler, *store, executor, clock, agent::HarvestMode::kMonitor, dir);
  const core::GpuUuid gpu("GPU-00000000-0000-4000-8000-000000000000");
  // The pass in which the owner's process shows up beside the job.
  agent::HostPass owner_back;
  owner_back.at = clock.Now();
  observe::Verdict v;
  v.uuid = gpu;
  v.state = observe::GpuState::kBusy;
  v.evidence.foreign_processes = 1;
  v.evidence.reason = "owner returned";
  owner_back.verdicts.push_back(v);
  owner_back.snapshots.emplace_back();
  owner_back.samples.emplace_back();

  sched::JobSpec spec;
  spec.command = {"sh", "-c", "trap 'exit 0' USR1; echo ready; while :; do sleep 0.01; done"};
  spec.working_dir = "/tmp";
  spec.checkpoint_signal = SIGUSR1;
  spec.grace = core::Seconds(30);
  std::vector<double> ms;
  for (auto _ : state) {
    const sched::JobId id = store->Submit("bench", geteuid(), spec, clock.Now())->id;
    store::JobUpdate start;
    start.gpus = std::vector<core::GpuUuid>{gpu};
    if (!store->Transition(id, store::JobState::kQueued, store::JobState::kRunning, start).ok()) {
      state.SkipWithError("could not start the job");
      break;
    }
    auto job = executor.Launch({id, static_cast<uint32_t>(geteuid()), spec, {gpu}, dir, {}, 0});
    while (Slurp(job->stdout_path).find("ready") == std::string::npos) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    const auto t0 = std::chrono::steady_clock::now();
    while (store->Get(id)->state != store::JobState::kQueued) {
      harvester.Act(owner_back, [](const std::string&) {});
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(elapsed);
    ms.push_back(elapsed * 1000);
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
