// The cost of judging: one classifier step, and one full sampler pass over
// an 8-GPU host (snapshot through the real loader and the fake driver,
// /proc attribution, verdicts, roll-ups), and rendering /metrics. Figures:
// docs/benchmarks.md.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include "agent/host_metrics.h"
#include "agent/sampler.h"
#include "gpu/nvml/nvml_backend.h"
#include "observe/idle_classifier.h"

namespace gleaner {
namespace {

void BM_ClassifierObserve(benchmark::State& state) {
  observe::IdleClassifier classifier({});
  observe::GpuSample s;
  s.uuid = core::GpuUuid("GPU-bench");
  s.processes_known = true;
  s.power_w = 70;
  s.power_limit_w = 700;
  int64_t t = 0;
  for (auto _ : state) {
    s.at = core::FromUnixMicros(t);
    // Bursts and pauses, so every branch and the pause model are exercised.
    s.utilization_pct = (t / 1'000'000) % 900 < 60 ? 80 : 0;
    t += 1'000'000;
    benchmark::DoNotOptimize(classifier.Observe(s));
  }
}
BENCHMARK(BM_ClassifierObserve);

// The demo host's 8 GPUs through the real loader and the fake driver.
struct DemoHost {
  DemoHost() {
    setenv("GLEANER_FAKE_NVML_SCENARIO", "demo", 1);
    setenv("GLEANER_FAKE_NVML_TIME_S", "0", 1);
    auto opened =
        gpu::NvmlBackend::Create(std::string(GLEANER_FAKE_NVML_DIR) + "/modern/libnvidia-ml.so.1");
    if (!opened.ok()) std::abort();
    backend = std::move(opened).value();
  }
  std::unique_ptr<gpu::NvmlBackend> backend;
  core::ManualClock clock;
  agent::ProcfsInspector inspector;
  agent::Sampler sampler{*backend, inspector, nullptr, clock, {}};
};

void BM_SamplerPass8Gpus(benchmark::State& state) {
  DemoHost host;
  for (auto _ : state) {
    host.clock.Advance(core::Seconds(1));
    auto pass = host.sampler.SampleOnce();
    benchmark::DoNotOptimize(pass);
  }
}
BENCHMARK(BM_SamplerPass8Gpus);

// What a Prometheus scrape costs the daemon: /metrics of an 8-GPU host,
// with the dcgm-exporter names too.
void BM_MetricsRender8Gpus(benchmark::State& state) {
  DemoHost host;
  agent::HostMetrics metrics("bench");
  for (int i = 0; i < 2; ++i) {
    host.clock.Advance(core::Seconds(1));
    metrics.Observe(*host.sampler.SampleOnce(), core::Seconds(30));
  }
  agent::IdleCostPrices prices;
  prices.owned_per_gpu_hour["NVIDIA H100 80GB HBM3"] = 1.49;
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string text =
        metrics.Render({{{"queued", 3}}, std::nullopt, std::nullopt}, prices, state.range(0) == 1);
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_MetricsRender8Gpus)->Arg(0)->Arg(1);

}  // namespace
}  // namespace gleaner

BENCHMARK_MAIN();
