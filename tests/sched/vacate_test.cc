#include "sched/vacate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gleaner::sched {
namespace {

using ::testing::HasSubstr;

const core::TimePoint kT = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);
const core::GpuUuid kA("GPU-a"), kB("GPU-b");

TEST(VacatePlannerTest, CheckpointAtOnceThenKillAfterTheGraceOnce) {
  VacatePlanner p;
  const std::vector<RunningOnGpus> running{{1, {kA, kB}, 10, core::Seconds(30)},
                                           {2, {core::GpuUuid("GPU-c")}, 15, core::Seconds(30)}};
  EXPECT_TRUE(p.Plan(running, {}, kT).empty());
  const std::map<core::GpuUuid, GpuClaim> claims{{kB, {kB, "owner returned: process 42 of bob"}}};
  auto actions = p.Plan(running, claims, kT + core::Seconds(1));
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, VacateAction::Kind::kCheckpoint);
  EXPECT_EQ(actions[0].job, 1);
  EXPECT_EQ(actions[0].signal, 10);
  EXPECT_THAT(actions[0].reason, HasSubstr("GPU-b: owner returned"));
  EXPECT_TRUE(p.IsVacating(1));
  EXPECT_EQ(p.Since(1), kT + core::Seconds(1));
  EXPECT_FALSE(p.IsVacating(2));
  EXPECT_TRUE(p.Plan(running, claims, kT + core::Seconds(30)).empty());  // still in grace
  actions = p.Plan(running, claims, kT + core::Seconds(31));
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, VacateAction::Kind::kKill);
  EXPECT_THAT(actions[0].reason, HasSubstr("grace of 30 s over"));
  EXPECT_TRUE(p.Plan(running, claims, kT + core::Seconds(60)).empty());  // once
  p.Forget(1);
  EXPECT_FALSE(p.IsVacating(1));
  EXPECT_EQ(p.Reason(1), "");
}

TEST(VacatePlannerTest, NoGraceMeansCheckpointAndKillTogether) {
  VacatePlanner p;
  auto actions = p.Plan({{5, {kA}, 15, core::Duration{}}}, {{kA, {kA, "GPU lost"}}}, kT);
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].kind, VacateAction::Kind::kCheckpoint);
  EXPECT_EQ(actions[1].kind, VacateAction::Kind::kKill);
}

}  // namespace
}  // namespace gleaner::sched
