#include "slurm/idle_actions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gleaner::slurm {
namespace {

using ::testing::HasSubstr;

const core::TimePoint kNow = core::FromUnixMicros(1'764'000'000'000'000);

// A job holding `gpus` GPUs here, each idle since `idle_for` ago
// (nullopt: busy).
JobOnHost Holding(const std::string& id, int gpus, std::optional<core::Duration> idle_for,
                  int gpu_count = 0) {
  JobOnHost j;
  j.job.id = id;
  j.job.start_time = kNow - std::chrono::hours(24);
  j.job.user = "alice";
  j.job.state = "RUNNING";
  j.job.gpu_count = gpu_count ? gpu_count : gpus;
  for (int i = 0; i < gpus; ++i) {
    AllocatedGpu g;
    g.index = static_cast<uint32_t>(i);
    g.uuid = core::GpuUuid("GPU-" + std::to_string(i));
    observe::Verdict v;
    v.state = idle_for ? observe::GpuState::kIdle : observe::GpuState::kBusy;
    v.since = kNow - idle_for.value_or(core::Seconds(60));
    g.verdict = v;
    j.gpus.push_back(g);
  }
  return j;
}

TEST(IdleActionsTest, ActsOnceOnAJobWhoseWholeAllocationSatUnused) {
  IdleAllocationActions actions({IdleAction::kCancel, std::chrono::hours(2)});
  const std::set<std::string> alerted = {"1", "2", "3"};
  const auto planned =
      actions.Decide({Holding("1", 2, std::chrono::hours(3)),
                      Holding("2", 2, std::chrono::hours(1)), Holding("3", 2, std::nullopt)},
                     kNow - std::chrono::hours(3), alerted);
  EXPECT_TRUE(planned.empty()) << "first seen now: no idleness of its own yet";
  const auto later =
      actions.Decide({Holding("1", 2, std::chrono::hours(3)),
                      Holding("2", 2, std::chrono::hours(1)), Holding("3", 2, std::nullopt)},
                     kNow, alerted);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].job.job.id, "1");
  EXPECT_EQ(later[0].action, IdleAction::kCancel);
  EXPECT_THAT(later[0].reason, HasSubstr("all 2 GPUs unused for 3h"));
  // Once: not again while the job runs the same run.
  EXPECT_TRUE(actions.Decide({Holding("1", 2, std::chrono::hours(3))}, kNow, alerted).empty());
  // Requeued: a new run, whose idleness counts from when it was seen again,
  // not from when the GPU quieted; acted on again once it idles that long.
  JobOnHost rerun = Holding("1", 2, std::chrono::hours(3));
  rerun.job.restart_count = 1;
  EXPECT_TRUE(actions.Decide({rerun}, kNow, alerted).empty());
  EXPECT_TRUE(actions.Decide({rerun}, kNow + std::chrono::minutes(119), alerted).empty());
  EXPECT_EQ(actions.Decide({rerun}, kNow + std::chrono::hours(2), alerted).size(), 1u);
}

// A user's new job on a GPU that sat idle for an hour is not idle itself:
// only the time since the job got the GPU counts.
TEST(IdleActionsTest, AGpuIdleBeforeTheJobStartedIsNotTheJobsIdleness) {
  IdleAllocationActions actions({IdleAction::kRequeue, std::chrono::minutes(10)});
  JobOnHost fresh = Holding("7", 1, std::chrono::hours(1));
  fresh.job.start_time = kNow - core::Seconds(2);
  EXPECT_TRUE(actions.Decide({fresh}, kNow - std::chrono::minutes(1), {"7"}).empty());
  EXPECT_TRUE(actions.Decide({fresh}, kNow, {"7"}).empty());
  EXPECT_TRUE(actions.Decide({fresh}, kNow + std::chrono::minutes(9), {"7"}).empty());
  EXPECT_EQ(actions.Decide({fresh}, kNow + std::chrono::minutes(10), {"7"}).size(), 1u);
  EXPECT_EQ(fresh.UnusedGpus(kNow, std::chrono::minutes(1)), 0);
  EXPECT_EQ(fresh.UnusedFor(kNow), core::Seconds(2));
}

TEST(IdleActionsTest, OnlyAfterTheOwnersAlert) {
  IdleAllocationActions actions({IdleAction::kCancel, std::chrono::hours(2)});
  const JobOnHost idle = Holding("1", 1, std::chrono::hours(5));
  actions.Decide({idle}, kNow - std::chrono::hours(3), {});
  EXPECT_TRUE(actions.Decide({idle}, kNow, {}).empty()) << "no alert fired for it";
  EXPECT_EQ(actions.Decide({idle}, kNow, {"1"}).size(), 1u);
}

TEST(IdleActionsTest, NeverOnPartOfAJobNorOnGleanersOwnNorWhenOff) {
  IdleAllocationActions actions({IdleAction::kRequeue, std::chrono::hours(2)});
  const std::set<std::string> alerted = {"1", "2", "3", "5"};
  const core::TimePoint before = kNow - std::chrono::hours(3);
  // 2 GPUs here of 4: the other node's may be busy.
  actions.Decide({Holding("1", 2, std::chrono::hours(3), 4)}, before, alerted);
  EXPECT_TRUE(actions.Decide({Holding("1", 2, std::chrono::hours(3), 4)}, kNow, alerted).empty());
  // gleaner's own bridged job: exempt by id (a comment anyone could write).
  JobOnHost bridged = Holding("2", 1, std::chrono::hours(3));
  bridged.job.comment = "gleaner-bridge node=n1";
  const JobOnHost other = Holding("5", 1, std::chrono::hours(3));
  actions.Decide({bridged, other}, before, alerted, {"2"});
  const auto planned = actions.Decide({bridged, other}, kNow, alerted, {"2"});
  ASSERT_EQ(planned.size(), 1u);
  EXPECT_EQ(planned[0].job.job.id, "5");
  IdleAllocationActions off({IdleAction::kNone, {}});
  off.Decide({Holding("3", 1, std::chrono::hours(30))}, before, alerted);
  EXPECT_TRUE(off.Decide({Holding("3", 1, std::chrono::hours(30))}, kNow, alerted).empty());
}

}  // namespace
}  // namespace gleaner::slurm
