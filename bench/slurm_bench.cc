// What `gleaner slurm jobs` costs on a site's worth of Slurm jobs: reading
// squeue's JSON for 1,000 jobs (22.05's schema), and joining this node's
// jobs to its 8 GPUs with a week of minute roll-ups into the report.
// Figures: docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <string>

#include "slurm/allocation.h"
#include "slurm/jobs_report.h"
#include "slurm/slurm_json.h"

namespace gleaner {
namespace {

constexpr int kGpusPerNode = 8;

// `jobs` running jobs of 2 GPUs each, four to a node, node000 first.
std::string SqueueJson(int jobs) {
  std::string out = R"({"meta": {"Slurm": {"version": {"major": 22, "micro": 8, "minor": 5}}},)"
                    R"( "errors": [], "jobs": [)";
  for (int i = 0; i < jobs; ++i) {
    char node[16];
    std::snprintf(node, sizeof node, "node%03d", i / 4);
    const int first = (i % 4) * 2;
    out += std::string(i ? "," : "") + R"({"job_id": )" + std::to_string(1000 + i) +
           R"(, "name": "train-)" + std::to_string(i) + R"(", "user_name": "user)" +
           std::to_string(i % 50) + R"(", "user_id": )" + std::to_string(2000 + i % 50) +
           R"(, "account": "acct)" + std::to_string(i % 7) +
           R"(", "partition": "gpu", "qos": "normal", "job_state": "RUNNING",)"
           R"( "state_reason": "None", "start_time": 1764000000, "restart_cnt": 0,)"
           R"( "exit_code": 0, "nodes": ")" +
           node + R"(", "job_resources": {"allocated_nodes": [{"nodename": ")" + node +
           R"j("}]}, "gres_detail": ["gpu:2(IDX:)j" + std::to_string(first) + "-" +
           std::to_string(first + 1) + R"j()"], "tres_alloc_str": "cpu=8,gres/gpu=2"})j";
  }
  return out + "]}";
}

void BM_ParseSqueue(benchmark::State& state) {
  const std::string text = SqueueJson(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto doc = slurm::ParseSlurmJobs(text);
    if (!doc.ok() || doc->jobs.size() != static_cast<size_t>(state.range(0))) {
      state.SkipWithError("parse failed");
      break;
    }
    benchmark::DoNotOptimize(doc);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ParseSqueue)->Arg(1000)->Unit(benchmark::kMillisecond);

// The report for node000 (4 jobs on its 8 GPUs) from 1,000 jobs and a
// week of minutes per GPU.
void BM_JobsReportWithAWeekOfMinutes(benchmark::State& state) {
  const auto doc = slurm::ParseSlurmJobs(SqueueJson(1000));
  const core::TimePoint now = core::FromUnixMicros(1'764'000'000'000'000 + 7 * 86'400'000'000);
  std::vector<slurm::HostGpu> gpus;
  std::map<core::GpuUuid, std::vector<observe::MinuteRollup>> rollups;
  for (uint32_t g = 0; g < kGpusPerNode; ++g) {
    const core::GpuUuid uuid("GPU-bench-" + std::to_string(g));
    gpus.push_back({g, uuid, std::nullopt, 0});
    auto& minutes = rollups[uuid];
    for (int m = 0; m < 7 * 1440; ++m) {
      observe::MinuteRollup r;
      r.uuid = uuid;
      r.minute = core::FromUnixMicros(1'764'000'000'000'000 + int64_t{m} * 60'000'000);
      r.observed = core::Seconds(60);
      r.state = m % 3 ? observe::GpuState::kIdle : observe::GpuState::kBusy;
      (m % 3 ? r.idle : r.busy) = core::Seconds(60);
      minutes.push_back(r);
    }
  }
  for (auto _ : state) {
    const auto here = slurm::JobsOnHost(doc->jobs, "node000", gpus);
    benchmark::DoNotOptimize(slurm::BuildJobsReport(here, rollups, now));
  }
}
BENCHMARK(BM_JobsReportWithAWeekOfMinutes)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gleaner

BENCHMARK_MAIN();
