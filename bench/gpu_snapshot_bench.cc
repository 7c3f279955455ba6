// What one full snapshot of an 8-GPU host costs through the real NVML
// loader (against the fake libnvidia-ml.so.1) and in process, beside the
// cost of starting any external tool, which is the floor for approaches
// that shell out to nvidia-smi. Figures and commands: docs/benchmarks.md.
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <string>

#include "agent/process_info.h"
#include "gpu/fake_backend.h"
#include "gpu/nvml/nvml_backend.h"
#include "views/gpus_json.h"
#include "views/host_view.h"

extern char** environ;

namespace gleaner {
namespace {

std::unique_ptr<gpu::NvmlBackend> OpenFakeNvml(const char* variant) {
  setenv("GLEANER_FAKE_NVML_SCENARIO", "demo", 1);
  setenv("GLEANER_FAKE_NVML_TIME_S", "0", 1);
  auto backend = gpu::NvmlBackend::Create(std::string(GLEANER_FAKE_NVML_DIR) + "/" + variant +
                                          "/libnvidia-ml.so.1");
  if (!backend.ok()) std::abort();
  return std::move(backend).value();
}

void BM_NvmlSnapshot8Gpus(benchmark::State& state, const char* variant) {
  auto backend = OpenFakeNvml(variant);
  for (auto _ : state) {
    auto snap = backend->Snapshot();
    benchmark::DoNotOptimize(snap);
  }
}
BENCHMARK_CAPTURE(BM_NvmlSnapshot8Gpus, modern_driver, "modern");
BENCHMARK_CAPTURE(BM_NvmlSnapshot8Gpus, legacy_driver, "legacy");

void BM_NvmlTopology8Gpus(benchmark::State& state) {
  auto backend = OpenFakeNvml("modern");
  for (auto _ : state) {
    auto links = backend->Topology();
    benchmark::DoNotOptimize(links);
  }
}
BENCHMARK(BM_NvmlTopology8Gpus);

void BM_FakeBackendSnapshot8Gpus(benchmark::State& state) {
  core::RealClock clock;
  auto backend = gpu::FakeBackend::Create(*gpu::LoadScenario("demo"), clock);
  for (auto _ : state) {
    auto snap = (*backend)->Snapshot();
    benchmark::DoNotOptimize(snap);
  }
}
BENCHMARK(BM_FakeBackendSnapshot8Gpus);

// Everything `gleaner gpus --json` does after start-up: read, attribute
// processes from /proc, serialise.
void BM_GpusJsonDocument(benchmark::State& state) {
  auto backend = OpenFakeNvml("modern");
  core::RealClock clock;
  agent::ProcfsInspector inspector;
  for (auto _ : state) {
    auto view = views::ReadHost(*backend, inspector, clock.Now(), true);
    std::string text = views::GpusToJson(*view).dump();
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_GpusJsonDocument);

// posix_spawn + waitpid of /bin/true: what any call to an external program
// costs before it does anything. nvidia-smi adds its own NVML init and
// queries on top of this.
void BM_SpawnAndReapTrue(benchmark::State& state) {
  char arg0[] = "/bin/true";
  char* argv[] = {arg0, nullptr};
  for (auto _ : state) {
    pid_t pid = 0;
    if (posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ) != 0) std::abort();
    int status = 0;
    waitpid(pid, &status, 0);
  }
}
BENCHMARK(BM_SpawnAndReapTrue)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gleaner

BENCHMARK_MAIN();
