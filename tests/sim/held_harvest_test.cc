// Co-location and parking in the harvest replay, on one GPU whose holder's
// story is written out by hand: when a job may go beside it, when it must
// leave, when the holder is parked and what it waits to come back.
#include <gtest/gtest.h>

#include "sim/harvest.h"

namespace gleaner::sim {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

// One GPU sampled every minute. Each step: (from, utilization, GiB held);
// a holder process is on it whenever it holds memory.
OwnerTimeline Holder(const std::vector<std::tuple<int64_t, double, int64_t>>& steps,
                     int64_t end_s) {
  OwnerTimeline t;
  t.name = "holder";
  t.end_s = end_s;
  t.node_gpus = {1};
  t.from_counts = false;
  t.step_s = 60;
  t.gpus.emplace_back();
  for (const auto& [at, util, gib] : steps) {
    t.gpus[0].push_back({at, true, util, gib * kGiB, gib > 0});
  }
  return t;
}

HarvestResult Replay(const OwnerTimeline& t, const std::vector<HarvestJob>& q, HarvestPolicy policy,
                     int64_t vacate_s = 30) {
  HarvestConfig c;
  c.policy = policy;
  c.vacate_s = vacate_s;
  auto r = RunHarvest(t, q, c);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : HarvestResult{};
}

HarvestJob Job(int64_t work_s, int64_t gib) {
  return {0, work_s, 1, "ann", core::Bytes(static_cast<uint64_t>(gib * kGiB))};
}

// 30 GiB held at 0 % for two hours, then 75 GiB (still at 0 %).
OwnerTimeline Grows() { return Holder({{0, 0, 30}, {7200, 0, 75}}, 10800); }

TEST(HeldHarvestTest, TodayNothingIsLentBesideAHolder) {
  const HarvestResult r = Replay(Grows(), {Job(20000, 20)}, HarvestPolicy::kGleaner);
  EXPECT_EQ(r.harvested_gpu_s, 0);
  EXPECT_EQ(r.held_idle_gpu_s, 10800);
}

TEST(HeldHarvestTest, AJobThatFitsGoesBesideAndLeavesWhenTheHolderGrows) {
  // After an hour of history: 80 GiB less the 30 GiB peak less 8 GiB of
  // margin leaves 42 GiB; the 20 GiB job goes there. At 7200 the holder
  // passes its peak: the job is told to leave and takes 30 s, during which
  // 75 + 20 GiB would not fit in 80: one minute of risk.
  const HarvestResult r = Replay(Grows(), {Job(20000, 20)}, HarvestPolicy::kColocate);
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_GE(r.jobs[0].first_start_s, 3600);
  EXPECT_LE(r.jobs[0].first_start_s, 3600 + 120);
  EXPECT_EQ(r.jobs[0].preemptions, 1);
  EXPECT_EQ(r.shared_gpu_s, 7230 - r.jobs[0].first_start_s);
  EXPECT_EQ(r.harvested_gpu_s, r.shared_gpu_s);  // 75 GiB leaves no room after
  EXPECT_EQ(r.holder_oom_risk_minutes, 1);
  // A job that leaves at once leaves no risk behind.
  EXPECT_EQ(Replay(Grows(), {Job(20000, 20)}, HarvestPolicy::kColocate, 0).holder_oom_risk_minutes,
            0);
}

TEST(HeldHarvestTest, OnlyADeclarationThatFitsIsLentBeside) {
  const HarvestResult r = Replay(Grows(), {Job(600, 60), Job(600, 0)}, HarvestPolicy::kColocate);
  EXPECT_EQ(r.jobs[0].first_start_s, -1);  // 60 GiB is more than the 42 left
  EXPECT_EQ(r.jobs[1].first_start_s, -1);  // undeclared: whole GPUs only
  EXPECT_EQ(r.harvested_gpu_s, 0);
}

TEST(HeldHarvestTest, AHolderWithTooLittleHistoryLendsNothing) {
  // It appears at 1800 and computes at 4800: never an hour seen alone.
  const HarvestResult r = Replay(Holder({{0, 0, 0}, {1800, 0, 30}, {4800, 50, 30}}, 7200),
                                 {Job(20000, 20)}, HarvestPolicy::kColocate);
  EXPECT_EQ(r.shared_gpu_s, 0);
}

TEST(HeldHarvestTest, AForgottenHolderIsParkedLentWholeAndRestoredWhenItWakes) {
  // Held idle from 300 s; told at 300 + 1800, parked 300 s later. The
  // undeclared job takes the whole GPU. At 7200 the holder computes: the
  // job leaves in 30 s and 30 GiB come back at 5 GB/s (7 s).
  const OwnerTimeline t = Holder({{0, 0, 30}, {7200, 50, 30}}, 10800);
  const HarvestResult r = Replay(t, {Job(20000, 0)}, HarvestPolicy::kPark);
  EXPECT_EQ(r.parks, 1);
  EXPECT_EQ(r.restores, 1);
  EXPECT_EQ(r.restore_wait_s, 30 + 7);
  EXPECT_GE(r.jobs[0].first_start_s, 2400);
  EXPECT_LE(r.jobs[0].first_start_s, 2400 + 120);
  EXPECT_EQ(r.parked_gpu_s, 7200 - r.jobs[0].first_start_s);  // then it is restoring
  EXPECT_EQ(r.jobs[0].preemptions, 1);
  EXPECT_EQ(r.holder_oom_risk_minutes, 0);
  // The holder waited for the job to leave, then for its memory.
  EXPECT_EQ(r.owner_delay_gpu_s, 30 + 7);
  EXPECT_EQ(r.idle_gpu_s + r.owner_busy_gpu_s + r.no_data_gpu_s + r.owner_delay_gpu_s, 10800);
  // Without parking the undeclared job never runs.
  EXPECT_EQ(Replay(t, {Job(20000, 0)}, HarvestPolicy::kColocate).harvested_gpu_s, 0);
}

TEST(HeldHarvestTest, AHolderThatWakesDuringItsNoticeIsNotParked) {
  // Told at about 2100; computes at 2200, before the park at 2400.
  const OwnerTimeline t = Holder({{0, 0, 30}, {2200, 50, 30}, {2260, 0, 30}}, 4000);
  const HarvestResult r = Replay(t, {Job(20000, 0)}, HarvestPolicy::kPark);
  EXPECT_EQ(r.parks, 0);
  EXPECT_EQ(r.harvested_gpu_s, 0);
}

TEST(HeldHarvestTest, AParkedHolderThatExitsNeedsNoRestore) {
  const OwnerTimeline t = Holder({{0, 0, 30}, {5000, 0, 0}}, 7200);
  const HarvestResult r = Replay(t, {Job(20000, 0)}, HarvestPolicy::kPark);
  EXPECT_EQ(r.parks, 1);
  EXPECT_EQ(r.restores, 0);
  EXPECT_EQ(r.jobs[0].preemptions, 0);  // the GPU stays lent, now empty
}

}  // namespace
}  // namespace gleaner::sim
