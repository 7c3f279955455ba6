// Harvest replays over the real owner traces (../shared/traces or
// GLEANER_TRACE_DIR): every GPU-second is accounted for, gleaner never
// lends a GPU an owner's process holds, and it takes GPUs back from owners
// far less often than lending on instantaneous idleness does.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "sim/harvest_scenario.h"
#include "sim/owner_sources.h"
#include "sim/utilization_trace.h"
#include "testing/trace_dir.h"

namespace gleaner::sim {
namespace {

using testing::TraceDir;

void ExpectAccountsAddUp(const OwnerTimeline& t, const HarvestResult& r) {
  EXPECT_EQ(r.idle_gpu_s + r.owner_busy_gpu_s + r.no_data_gpu_s + r.owner_delay_gpu_s,
            int64_t{t.gpu_count()} * (t.end_s - t.start_s));
  EXPECT_LE(r.harvested_idle_gpu_s, r.idle_gpu_s);
  EXPECT_EQ(r.idle_gpu_s, QuietGpuSeconds(t, HarvestConfig{}.idle.busy_utilization_pct));
}

std::vector<HarvestJob> Queue(const OwnerTimeline& t, double load) {
  SyntheticQueueOptions o;
  o.start_s = t.start_s;
  o.end_s = t.end_s;
  o.offered_gpu_s = load * static_cast<double>(QuietGpuSeconds(t, 10));
  return SyntheticQueue(o);
}

const HarvestBaselineRun& RunOf(const std::vector<HarvestBaselineRun>& runs, HarvestPolicy p) {
  for (const HarvestBaselineRun& r : runs) {
    if (r.policy == p && r.checkpoints) return r;
  }
  return runs.front();
}

TEST(HarvestTracesTest, GenAiPodsHoldTheirGpusWhileQuiet) {
  const std::string dir = TraceDir() + "/alibaba-genai";
  GLEANER_SKIP_WITHOUT_TRACE(dir);
  TraceCleaning cleaning;
  auto series = ReadUtilizationTrace(dir + "/pod_gpu_duty_cycle_anon.csv",
                                     dir + "/pod_gpu_memory_used_bytes_anon.csv", false, &cleaning);
  ASSERT_TRUE(series.ok()) << series.status().ToString();
  const OwnerTimeline t = TimelineFromUtilization("genai", *series, 8);
  ASSERT_EQ(t.gpu_count(), 80);
  HarvestConfig config;
  config.checkpoint_s = 1800;
  auto runs = RunHarvestBaselines(t, Queue(t, 1.0), config);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  for (const HarvestBaselineRun& r : *runs) ExpectAccountsAddUp(t, r.result);
  const HarvestResult& naive = RunOf(*runs, HarvestPolicy::kNaive).result;
  const HarvestResult& gleaner = RunOf(*runs, HarvestPolicy::kGleaner).result;
  // Almost all quiet time is held: the pods keep their memory.
  EXPECT_GT(naive.held_idle_gpu_s, naive.idle_gpu_s * 9 / 10);
  // gleaner lends only GPUs nobody holds (a held one is HeldIdle, never
  // Idle); naive lending takes the held ones and collides with their owners.
  EXPECT_LE(gleaner.harvested_idle_gpu_s,
            gleaner.idle_gpu_s - gleaner.held_idle_gpu_s + gleaner.owner_returns * 30);
  EXPECT_GT(naive.owner_returns, 100 * std::max<int64_t>(1, gleaner.owner_returns));
}

TEST(HarvestTracesTest, GenAiByUtilizationAloneGleanerTakesBackFarLessOften) {
  const std::string dir = TraceDir() + "/alibaba-genai";
  GLEANER_SKIP_WITHOUT_TRACE(dir);
  TraceCleaning cleaning;
  auto series = ReadUtilizationTrace(dir + "/pod_gpu_duty_cycle_anon.csv", "", false, &cleaning);
  ASSERT_TRUE(series.ok()) << series.status().ToString();
  const OwnerTimeline t = TimelineFromUtilization("genai", *series, 8);
  HarvestConfig config;
  config.checkpoint_s = 1800;
  auto runs = RunHarvestBaselines(t, Queue(t, 1.0), config);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  const HarvestResult& naive = RunOf(*runs, HarvestPolicy::kNaive).result;
  const HarvestResult& gleaner = RunOf(*runs, HarvestPolicy::kGleaner).result;
  ExpectAccountsAddUp(t, gleaner);
  EXPECT_GT(gleaner.harvested_gpu_s, 0);
  EXPECT_LT(gleaner.owner_returns * 5, naive.owner_returns);
  EXPECT_LT(gleaner.lost_gpu_s, naive.lost_gpu_s);
  EXPECT_LT(gleaner.owner_delay_gpu_s, naive.owner_delay_gpu_s);
}

TEST(HarvestTracesTest, AHeliosVc) {
  const std::string path = TraceDir() + "/helios-earth/vc3sl.csv";
  GLEANER_SKIP_WITHOUT_TRACE(path);
  auto vc = ReadHeliosVc(path, {});
  ASSERT_TRUE(vc.ok()) << vc.status().ToString();
  auto t = TimelineFromHelios({*vc}, 8);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->gpu_count(), 64);
  HarvestConfig config;
  config.checkpoint_s = 1800;
  auto r = RunHarvest(*t, Queue(*t, 1.0), config);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectAccountsAddUp(*t, *r);
  EXPECT_EQ(r->no_data_gpu_s, 0);  // every GPU is running or idle in every minute
  // Demand equals the limit: most of it is harvested, not all.
  EXPECT_GT(r->harvested_idle_gpu_s, r->idle_gpu_s / 2);
  EXPECT_LT(r->harvested_idle_gpu_s, r->idle_gpu_s);
}

TEST(HarvestTracesTest, PhillyAsWholeNodes) {
  const std::string dir = TraceDir() + "/philly";
  GLEANER_SKIP_WITHOUT_TRACE(dir);
  auto seq = ReadPhillyNodeSequence(dir + "/philly_node_sequence.csv", {});
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  auto machines = ReadPhillyMachines(dir + "/cluster_machine_list");
  ASSERT_TRUE(machines.ok()) << machines.status().ToString();
  auto t = TimelineFromPhilly(*seq, *machines);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->gpu_count(), 2490);
  // Gap rows and the missing hours are no data, never idle.
  HarvestConfig none;
  none.policy = HarvestPolicy::kNone;
  auto r = RunHarvest(*t, {}, none);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectAccountsAddUp(*t, *r);
  EXPECT_GT(r->no_data_gpu_s, int64_t{420} * 2 * 18 * 3600);  // at least the 18-hour gap
  EXPECT_GT(r->idle_gpu_s, 0);
}

}  // namespace
}  // namespace gleaner::sim
