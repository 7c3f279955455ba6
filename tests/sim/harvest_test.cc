// The harvest replay on tiny timelines whose outcomes are worked out by hand
// in the comments; the owner timeline builders; the synthetic queue.
#include "sim/harvest.h"

#include <gtest/gtest.h>

#include "sim/harvest_money.h"
#include "sim/harvest_scenario.h"

namespace gleaner::sim {
namespace {

// One node of two GPUs for two hours. GPU 0 is its owner's throughout;
// GPU 1 is quiet until `owner_back_s`, then the owner's again.
OwnerTimeline TwoGpus(int64_t owner_back_s) {
  OccupancyGroup g;
  g.name = "box";
  g.node_gpus = {2};
  g.steps = {{0, 1, 2}, {owner_back_s, 2, 2}};
  auto t = TimelineFromOccupancy("box", {g}, 7200);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

HarvestResult Harvest(const OwnerTimeline& owner, const std::vector<HarvestJob>& queue,
                      HarvestPolicy policy, int64_t checkpoint_s = 0) {
  HarvestConfig c;
  c.policy = policy;
  c.checkpoint_s = checkpoint_s;
  c.vacate_s = 30;
  auto r = RunHarvest(owner, queue, c);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : HarvestResult{};
}

// Every GPU-second of the timeline is the owner's, quiet, without data, or
// an owner waiting for a job to leave.
void ExpectAccountsAddUp(const OwnerTimeline& t, const HarvestResult& r) {
  EXPECT_EQ(r.idle_gpu_s + r.owner_busy_gpu_s + r.no_data_gpu_s + r.owner_delay_gpu_s,
            int64_t{t.gpu_count()} * (t.end_s - t.start_s));
  EXPECT_LE(r.harvested_gpu_s, r.idle_gpu_s + r.owner_delay_gpu_s + r.no_data_gpu_s);
  EXPECT_LE(r.harvested_idle_gpu_s, r.harvested_gpu_s);
  EXPECT_LE(r.harvested_idle_gpu_s, r.idle_gpu_s);
}

TEST(OwnerTimelineTest, PackedOccupancyFillsTheLowestUnitsFirst) {
  OccupancyGroup g;
  g.name = "vc";
  g.node_gpus = {4};
  g.steps = {{0, 1, 4}, {60, 3, 4}, {120, 2, 3}};
  auto t = TimelineFromOccupancy("vc", {g}, 180);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->gpu_count(), 4);
  // GPU 0: busy throughout. GPU 2: quiet, busy at 60, quiet at 120.
  // GPU 3: quiet, then no data at 120.
  EXPECT_EQ(t->gpus[0].size(), 1u);
  EXPECT_TRUE(t->gpus[0][0].owner_process);
  ASSERT_EQ(t->gpus[2].size(), 3u);
  EXPECT_EQ(t->gpus[2][1].at_s, 60);
  EXPECT_EQ(t->gpus[2][1].utilization_pct, 100);
  EXPECT_EQ(t->gpus[2][2].utilization_pct, 0);
  ASSERT_EQ(t->gpus[3].size(), 2u);
  EXPECT_FALSE(t->gpus[3][1].has_data);
  // Quiet GPU-seconds: 3 x 60 + 1 x 60 + 1 x 60 (GPU 2 in the last minute).
  EXPECT_EQ(QuietGpuSeconds(*t, 10), 3 * 60 + 60 + 60);
}

TEST(OwnerTimelineTest, WholeNodeUnitsMoveAllTheirGpus) {
  OccupancyGroup g;
  g.name = "philly";
  g.node_gpus = {2, 8};
  g.whole_nodes = true;
  g.steps = {{0, 1, 2}, {60, 2, 2}};
  auto t = TimelineFromOccupancy("philly", {g}, 120);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->gpu_count(), 10);
  for (size_t gpu = 2; gpu < 10; ++gpu) {
    ASSERT_EQ(t->gpus[gpu].size(), 2u);
    EXPECT_EQ(t->gpus[gpu][1].at_s, 60);
  }
  EXPECT_EQ(QuietGpuSeconds(*t, 10), 8 * 60);
}

TEST(OwnerTimelineTest, BadCountsAreErrors) {
  OccupancyGroup g;
  g.name = "vc";
  g.node_gpus = {4};
  g.steps = {{0, 5, 4}};
  EXPECT_FALSE(TimelineFromOccupancy("vc", {g}, 60).ok());
  g.steps = {{0, 1, 4}};
  EXPECT_FALSE(TimelineFromOccupancy("vc", {g}, 0).ok());
}

TEST(HarvestTest, NoHarvestingLeavesTheQueueWaiting) {
  const OwnerTimeline t = TwoGpus(3600);
  const HarvestResult r = Harvest(t, {{0, 600, 1, "ann", {}}}, HarvestPolicy::kNone);
  EXPECT_EQ(r.idle_gpu_s, 3600);  // GPU 1 for its first hour
  EXPECT_EQ(r.harvested_gpu_s, 0);
  EXPECT_EQ(r.jobs[0].first_start_s, -1);
  ExpectAccountsAddUp(t, r);
}

TEST(HarvestTest, NaiveLendsAtOnceGleanerWatchesFirst) {
  const OwnerTimeline t = TwoGpus(3600);
  // Naive: GPU 1 is quiet at 0, lent at once: 0..600.
  HarvestResult naive = Harvest(t, {{0, 600, 1, "ann", {}}}, HarvestPolicy::kNaive);
  EXPECT_EQ(naive.jobs[0].first_start_s, 0);
  EXPECT_EQ(naive.jobs[0].end_s, 600);
  EXPECT_EQ(naive.harvested_gpu_s, 600);
  ExpectAccountsAddUp(t, naive);
  // gleaner: no history at the start, so the classifier watches for its
  // idle window (300 s) first: 300..900.
  HarvestResult gleaner = Harvest(t, {{0, 600, 1, "ann", {}}}, HarvestPolicy::kGleaner);
  EXPECT_EQ(gleaner.jobs[0].first_start_s, 300);
  EXPECT_EQ(gleaner.jobs[0].end_s, 900);
  EXPECT_EQ(gleaner.harvested_gpu_s, 600);
  EXPECT_EQ(gleaner.preemptions, 0);
  EXPECT_GT(gleaner.samples, 0);
  ExpectAccountsAddUp(t, gleaner);
}

TEST(HarvestTest, AnOwnerReturningPreemptsAndCheckpointsLimitTheLoss) {
  // The owner is back at 1000; the job needs 2000 s; it leaves 30 s after
  // the signal (1030) and is requeued; nothing is free again.
  const OwnerTimeline t = TwoGpus(1000);
  const std::vector<HarvestJob> q = {{0, 2000, 1, "ann", {}}};
  // Naive, no checkpoints: ran 0..1030, all lost.
  HarvestResult r = Harvest(t, q, HarvestPolicy::kNaive);
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_EQ(r.owner_returns, 1);
  EXPECT_EQ(r.lost_gpu_s, 1030);
  EXPECT_EQ(r.owner_delay_gpu_s, 30);
  EXPECT_EQ(r.harvested_gpu_s, 1030);
  EXPECT_EQ(r.harvested_idle_gpu_s, 1000);
  EXPECT_EQ(r.jobs[0].end_s, -1);
  ExpectAccountsAddUp(t, r);
  // Naive, a checkpoint every 600 s: 600 s saved, 430 lost.
  r = Harvest(t, q, HarvestPolicy::kNaive, 600);
  EXPECT_EQ(r.lost_gpu_s, 430);
  // gleaner, checkpoints: ran 300..1030 = 730 s, 600 saved, 130 lost.
  r = Harvest(t, q, HarvestPolicy::kGleaner, 600);
  EXPECT_EQ(r.jobs[0].first_start_s, 300);
  EXPECT_EQ(r.lost_gpu_s, 130);
  EXPECT_EQ(r.owner_delay_gpu_s, 30);
  ExpectAccountsAddUp(t, r);
}

TEST(HarvestTest, ARequeuedJobResumesFromItsCheckpoint) {
  // GPU 1 quiet 0..1000, the owner's 1000..2000, quiet again 2000..7200.
  OccupancyGroup g;
  g.name = "box";
  g.node_gpus = {2};
  g.steps = {{0, 1, 2}, {1000, 2, 2}, {2000, 1, 2}};
  auto t = TimelineFromOccupancy("box", {g}, 7200);
  ASSERT_TRUE(t.ok());
  // Naive, checkpoints every 600 s: the first attempt (0..1030) saves 600;
  // the rest (1400 s) runs 2000..3400.
  HarvestResult r = Harvest(*t, {{0, 2000, 1, "ann", {}}}, HarvestPolicy::kNaive, 600);
  EXPECT_EQ(r.jobs[0].preemptions, 1);
  EXPECT_EQ(r.jobs[0].end_s, 3400);
  EXPECT_EQ(r.harvested_gpu_s, 1030 + 1400);
  // gleaner: the owner's last busy moment is 1999 (what a sampler sees just
  // before the change); idle 300 s later, as the daemon would say: the rest
  // runs 2299..3699.
  r = Harvest(*t, {{0, 2000, 1, "ann", {}}}, HarvestPolicy::kGleaner, 600);
  EXPECT_EQ(r.jobs[0].end_s, 2299 + (2000 - 600));
  ExpectAccountsAddUp(*t, r);
}

TEST(HarvestTest, JobsLargerThanANodeAreRejected) {
  const OwnerTimeline t = TwoGpus(3600);
  const HarvestResult r = Harvest(t, {{0, 60, 4, "ann", {}}}, HarvestPolicy::kGleaner);
  EXPECT_TRUE(r.jobs[0].rejected);
}

TEST(HarvestTest, UnsortedQueuesAndBadConfigsAreErrors) {
  const OwnerTimeline t = TwoGpus(3600);
  HarvestConfig c;
  EXPECT_FALSE(RunHarvest(t, {{100, 60, 1, "a", {}}, {0, 60, 1, "b", {}}}, c).ok());
  c.heartbeat_s = 0;
  EXPECT_FALSE(RunHarvest(t, {}, c).ok());
}

TEST(HarvestTest, SameInputsSameResult) {
  OccupancyGroup g;
  g.name = "vc";
  g.node_gpus = {8, 8};
  for (int m = 0; m < 600; ++m) g.steps.push_back({m * 60, (m * 7) % 13, 16});
  auto t = TimelineFromOccupancy("vc", {g}, 600 * 60);
  ASSERT_TRUE(t.ok());
  SyntheticQueueOptions o;
  o.seed = 7;
  o.start_s = t->start_s;
  o.end_s = t->end_s;
  o.offered_gpu_s = static_cast<double>(QuietGpuSeconds(*t, 10));
  const std::vector<HarvestJob> q = SyntheticQueue(o);
  const HarvestResult a = Harvest(*t, q, HarvestPolicy::kGleaner, 600);
  const HarvestResult b = Harvest(*t, q, HarvestPolicy::kGleaner, 600);
  EXPECT_GT(a.harvested_gpu_s, 0);
  EXPECT_EQ(a.harvested_gpu_s, b.harvested_gpu_s);
  EXPECT_EQ(a.lost_gpu_s, b.lost_gpu_s);
  EXPECT_EQ(a.samples, b.samples);
  for (size_t j = 0; j < q.size(); ++j) EXPECT_EQ(a.jobs[j].end_s, b.jobs[j].end_s);
  ExpectAccountsAddUp(*t, a);
}

TEST(SyntheticQueueTest, AsksForWhatWasOfferedAndIsSeeded) {
  SyntheticQueueOptions o;
  o.seed = 3;
  o.start_s = 1000;
  o.end_s = 1000 + 86400;
  o.offered_gpu_s = 500.0 * 3600;
  const std::vector<HarvestJob> a = SyntheticQueue(o);
  double asked = 0;
  for (const HarvestJob& j : a) {
    asked += static_cast<double>(j.gpus) * static_cast<double>(j.work_s);
    EXPECT_GE(j.submit_s, o.start_s);
    EXPECT_LT(j.submit_s, o.start_s + 86400 * 9 / 10);
    EXPECT_LE(j.gpus, 8);
    EXPECT_GE(j.work_s, 300);
  }
  EXPECT_GE(asked, o.offered_gpu_s);
  EXPECT_LT(asked, o.offered_gpu_s + 64 * 7200 + 8 * 14400);
  for (size_t i = 1; i < a.size(); ++i) EXPECT_LE(a[i - 1].submit_s, a[i].submit_s);
  const std::vector<HarvestJob> b = SyntheticQueue(o);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].work_s, b[i].work_s);
  o.seed = 4;
  const std::vector<HarvestJob> c = SyntheticQueue(o);
  EXPECT_NE(c.size() == a.size() && c[0].work_s == a[0].work_s, true);
}

TEST(SyntheticQueueTest, TraceJobsLargerThanANodeOrTooLateAreLeftOut) {
  const QueueFromTrace q =
      QueueFromTraceJobs({{0, 60, 1}, {10, 60, 16}, {5000, 60, 2}}, 100, 4000, 8);
  ASSERT_EQ(q.jobs.size(), 1u);
  EXPECT_EQ(q.jobs[0].submit_s, 100);
  EXPECT_EQ(q.too_large, 1);
  EXPECT_EQ(q.too_late, 1);
}

}  // namespace
}  // namespace gleaner::sim

namespace gleaner::sim {
namespace {

TEST(HarvestMoneyTest, PricesTheIdleHoursAndEachRunsWork) {
  // On-demand: 8 GPUs for 16 USD/h (2 per GPU) and 1 GPU for 1.50; the
  // low-confidence 0.10 row is used only when nothing else matches.
  auto catalog = cost::Catalog::Parse(
      "provider,region,instance,gpu_model,gpu_count,pricing_model,price_per_instance_hour,"
      "currency,source,date,confidence\n"
      "P,r1,big,A100-80GB-SXM,8,on-demand,16,USD,s1,2026-01-01,high\n"
      "Q,r2,one,A100-80GB-PCIe,1,on-demand,1.5,USD,s2,2026-02-01,medium\n"
      "R,r3,cheap,A100-80GB-PCIe,1,on-demand,0.1,USD,s3,2026-03-01,low\n"
      "S,r4,spot,A100-80GB-SXM,8,spot,4,USD,s4,2026-03-01,high\n",
      "test.csv");
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  auto prices = PriceHarvestGpus("A100-80GB", *catalog);
  ASSERT_TRUE(prices.ok()) << prices.status().ToString();
  EXPECT_EQ(prices->cloud_per_gpu_hour, 1.5);
  EXPECT_EQ(prices->cloud_offer, "Q r2 one");
  EXPECT_EQ(prices->cloud_date, "2026-02-01");
  // The A100 on-prem defaults (docs/cost.md): about 1.09 USD per owned
  // GPU-hour, 0.0553 to fill an idle one.
  EXPECT_NEAR(*prices->owned_per_gpu_hour, 1.09, 0.01);
  EXPECT_NEAR(*prices->marginal_per_gpu_hour, 0.0553, 0.0001);
  EXPECT_FALSE(PriceHarvestGpus("V100", *catalog).ok());
  EXPECT_FALSE(PriceHarvestGpus("H100-80GB", *catalog).ok());  // defaults, but no price

  // Two hours of idle GPU on one GPU; a job of 1,800 s ran on it.
  OccupancyGroup g;
  g.name = "box";
  g.node_gpus = {1};
  g.steps = {{0, 0, 1}};
  auto t = TimelineFromOccupancy("box", {g}, 7200);
  ASSERT_TRUE(t.ok());
  HarvestConfig c;
  c.policy = HarvestPolicy::kNaive;
  auto runs = RunHarvestBaselines(*t, {{0, 1800, 1, "ann", {}}}, c);
  ASSERT_TRUE(runs.ok());
  const HarvestMoney m = MoneyOf(*prices, *runs);
  // Idle: 2 GPU-hours x owned cost. Naive: 0.5 useful GPU-hours x 1.50 =
  // 0.75 of cloud value, less 0.5 x marginal of energy.
  EXPECT_DOUBLE_EQ(m.idle_cost, 2 * *prices->owned_per_gpu_hour);
  ASSERT_EQ(m.runs.size(), runs->size());
  EXPECT_DOUBLE_EQ(m.runs[0].cloud_value, 0);
  EXPECT_DOUBLE_EQ(m.runs[1].cloud_value, 0.75);
  EXPECT_DOUBLE_EQ(m.runs[1].energy_cost, 0.5 * *prices->marginal_per_gpu_hour);
  EXPECT_DOUBLE_EQ(m.runs[1].net_savings, 0.75 - 0.5 * *prices->marginal_per_gpu_hour);
}

}  // namespace
}  // namespace gleaner::sim
