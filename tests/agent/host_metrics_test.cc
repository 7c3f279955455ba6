// What /metrics says of a host: readings, state sets, time per state, the
// idle cost, and the exposition's escaping and histograms.
#include "agent/host_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "metrics/exposition.h"

namespace gleaner::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const core::TimePoint kT0 = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

HostPass Pass(int second, observe::GpuState state, std::optional<uint32_t> utilization) {
  HostPass p;
  p.at = kT0 + core::Seconds(second);
  gpu::GpuSnapshot s;
  s.index = 3;
  s.uuid = core::GpuUuid("GPU-a");
  s.name = gpu::Reading<std::string>::Of("NVIDIA \"H100\"");
  s.memory_total = gpu::Reading<core::Bytes>::Of(core::Bytes::GiB(80));
  if (utilization) s.utilization_gpu_pct = gpu::Reading<uint32_t>::Of(*utilization);
  p.snapshots.push_back(s);
  observe::Verdict v;
  v.uuid = s.uuid;
  v.state = state;
  v.since = kT0;
  v.at = p.at;
  p.verdicts.push_back(v);
  return p;
}

TEST(HostMetricsTest, ReadingsStatesAndTimePerState) {
  HostMetrics m("node\n1");
  m.Observe(Pass(0, observe::GpuState::kBusy, 50), core::Seconds(30));
  m.Observe(Pass(10, observe::GpuState::kIdle, 0), core::Seconds(30));             // 10 s busy
  m.Observe(Pass(25, observe::GpuState::kIdle, std::nullopt), core::Seconds(30));  // 15 s idle
  m.Observe(Pass(100, observe::GpuState::kIdle, 0), core::Seconds(30));  // a 75 s gap: nobody's
  IdleCostPrices prices;
  prices.owned_per_gpu_hour["NVIDIA \"H100\""] = 1.5;
  const std::string text =
      m.Render({{{"queued", 4}, {"running", 1}}, metrics::Histogram({1}).Read(), std::nullopt},
               prices, false);
  // Labels are escaped; the missing utilization of the last pass but one is
  // not carried on, the latest pass's is reported.
  const std::string labels = R"({gpu="3",uuid="GPU-a",model="NVIDIA \"H100\"",hostname="node\n1"})";
  EXPECT_THAT(text, HasSubstr("gleaner_gpu_utilization_ratio" + labels + " 0\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_gpu_memory_total_bytes" + labels + " 85899345920\n"));
  EXPECT_THAT(text, Not(HasSubstr("gleaner_gpu_power_watts{")));  // unreadable: left out
  const std::string state = labels.substr(0, labels.size() - 1);
  EXPECT_THAT(text, HasSubstr("gleaner_gpu_state" + state + ",state=\"idle\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_gpu_state" + state + ",state=\"busy\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_gpu_state_seconds_total" + state + ",state=\"busy\"} 10\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_gpu_state_seconds_total" + state + ",state=\"idle\"} 15\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_gpu_idle_seconds" + labels + " 100\n"));  // since kT0
  EXPECT_THAT(
      text,
      HasSubstr(
          R"(gleaner_idle_cost_per_hour{model="NVIDIA \"H100\"",state="idle",currency="USD",hostname="node\n1"} 1.5)"
          "\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_jobs{state=\"queued\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_jobs{state=\"held\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_queue_length 4\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE gleaner_scheduling_latency_seconds histogram\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_build_info{version=\""));
  EXPECT_THAT(text, HasSubstr(",daemon=\"up\"} 1\n"));
}

TEST(HostMetricsTest, EventsFillCountersAndHistograms) {
  HostMetrics m("n");
  metrics::Histogram started({2, 5, 14400});  // the scheduler's, submit to start
  started.Observe(3);
  started.Observe(7200);
  m.Preempted("owner_returned");
  m.Preempted("owner_returned");
  m.GaveBack(core::Milliseconds(1500));
  const std::string text = m.Render({{}, started.Read(), std::nullopt}, {}, false);
  EXPECT_THAT(text, HasSubstr("gleaner_scheduling_latency_seconds_bucket{le=\"2\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_scheduling_latency_seconds_bucket{le=\"5\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_scheduling_latency_seconds_bucket{le=\"14400\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_scheduling_latency_seconds_bucket{le=\"+Inf\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_scheduling_latency_seconds_sum 7203\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_preemptions_total{reason=\"owner_returned\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_owner_return_seconds_bucket{le=\"1\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gleaner_owner_return_seconds_bucket{le=\"2\"} 1\n"));
  // No pass yet: no GPU samples, but every family is declared.
  EXPECT_THAT(text, HasSubstr("# TYPE gleaner_gpu_utilization_ratio gauge\n"));
  EXPECT_THAT(text, Not(HasSubstr("gleaner_gpu_utilization_ratio{")));
  // Where nothing schedules (an agent), there is no scheduling latency.
  EXPECT_THAT(m.Render({}, {}, false), Not(HasSubstr("gleaner_scheduling_latency_seconds")));
}

TEST(ExpositionTest, ValuesAndEscapes) {
  EXPECT_EQ(metrics::FormatValue(0.1), "0.1");
  EXPECT_EQ(metrics::FormatValue(85899345920), "85899345920");
  EXPECT_EQ(metrics::FormatValue(1.0 / 0.0), "+Inf");
  EXPECT_EQ(metrics::EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
}

}  // namespace
}  // namespace gleaner::agent
