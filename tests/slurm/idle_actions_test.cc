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
  const auto planned =
      actions.Decide({Holding("1", 2, std::chrono::hours(3)),
                      Holding("2", 2, std::chrono::hours(1)), Holding("3", 2, std::nullopt)},
                     kNow);
  ASSERT_EQ(planned.size(), 1u);
  EXPECT_EQ(planned[0].job.job.id, "1");
  EXPECT_EQ(planned[0].action, IdleAction::kCancel);
  EXPECT_THAT(planned[0].reason, HasSubstr("all 2 GPUs unused for 3h"));
  // Once: not again while the job runs the same run.
  EXPECT_TRUE(actions.Decide({Holding("1", 2, std::chrono::hours(3))}, kNow).empty());
  // Requeued and idle again: a new run, acted on again.
  JobOnHost rerun = Holding("1", 2, std::chrono::hours(3));
  rerun.job.restart_count = 1;
  EXPECT_EQ(actions.Decide({rerun}, kNow).size(), 1u);
}

TEST(IdleActionsTest, NeverOnPartOfAJobNorOnGleanersOwnNorWhenOff) {
  IdleAllocationActions actions({IdleAction::kRequeue, std::chrono::hours(2)});
  // 2 GPUs here of 4: the other node's may be busy.
  EXPECT_TRUE(actions.Decide({Holding("1", 2, std::chrono::hours(3), 4)}, kNow).empty());
  // gleaner's own bridged job: exempt by id (a comment anyone could write).
  JobOnHost bridged = Holding("2", 1, std::chrono::hours(3));
  bridged.job.comment = "gleaner-bridge node=n1";
  EXPECT_TRUE(actions.Decide({bridged}, kNow, {"2"}).empty());
  EXPECT_EQ(actions.Decide({Holding("5", 1, std::chrono::hours(3))}, kNow, {"2"}).size(), 1u);
  IdleAllocationActions off({IdleAction::kNone, {}});
  EXPECT_TRUE(off.Decide({Holding("3", 1, std::chrono::hours(30))}, kNow).empty());
}

}  // namespace
}  // namespace gleaner::slurm
