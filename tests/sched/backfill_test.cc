// Backfill with expected runtimes: the first job that cannot start keeps
// the GPUs it will fit on; later jobs take them only if they end first or
// leave it enough.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/scheduler.h"
#include "sched_test_util.h"

namespace gleaner::sched {
namespace {

using ::testing::ElementsAre;
using testing::MakeNode;

using testing::At;
using testing::kT0;
using testing::Lines;

// `runtime_s` 0: no expected runtime.
JobRequest Job(JobId id, int gpus, int runtime_s, int priority = 0) {
  JobRequest j = testing::MakeJob(id, gpus);
  if (runtime_s > 0) j.expected_runtime = core::Seconds(runtime_s);
  j.priority = priority;
  return j;
}

SchedulerConfig WithBackfill() {
  SchedulerConfig config;
  config.backfill = true;
  return config;
}

TEST(BackfillTest, OnlyJobsThatEndInTimeTakeTheGpusABlockedGangWaitsFor) {
  Scheduler s(WithBackfill());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 4)}, At(0)).ok());
  ASSERT_THAT(Lines(s.Handle(JobSubmitted{Job(1, 3, 1000)}, At(0))),
              ElementsAre("start job 1 on a gpus 0,1,2"));
  // The gang fits on a when job 1 is expected to end, at 1000 s.
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Job(2, 4, 0, 100)}, At(10))).empty());
  EXPECT_EQ(*s.PendingReason(2), "needs 4 GPUs on one node; the largest free set is 1 on a");
  // Without a runtime, or running past 1000 s: kept off GPU 3.
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Job(3, 1, 0)}, At(20))).empty());
  EXPECT_EQ(*s.PendingReason(3),
            "needs 1 GPU; the free GPUs that would fit it are kept for job 2 (needs 4 GPUs), which "
            "should fit in 980 s; only jobs expected to end by then may use them (backfill)");
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Job(4, 1, 2000)}, At(30))).empty());
  // Ending at 540 s, well before: it runs now.
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Job(5, 1, 500)}, At(40))),
              ElementsAre("start job 5 on a gpus 3"));
  EXPECT_TRUE(Lines(s.Handle(JobFinished{5}, At(540))).empty());
  EXPECT_THAT(Lines(s.Handle(JobFinished{1}, At(1000))),
              ElementsAre("start job 2 on a gpus 0,1,2,3"));
}

TEST(BackfillTest, WithoutBackfillTheGreedyPassLetsTheSmallJobPass) {
  Scheduler s;  // backfill is off by default
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 4)}, At(0)).ok());
  ASSERT_EQ(Lines(s.Handle(JobSubmitted{Job(1, 3, 1000)}, At(0))).size(), 1u);
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Job(2, 4, 0, 100)}, At(10))).empty());
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Job(3, 1, 0)}, At(20))),
              ElementsAre("start job 3 on a gpus 3"));
}

TEST(BackfillTest, AnUnknownEndKeepsOutJobsWithoutARuntimeOnly) {
  Scheduler s(WithBackfill());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 2)}, At(0)).ok());
  ASSERT_EQ(Lines(s.Handle(JobSubmitted{Job(1, 1, 0)}, At(0))).size(), 1u);
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Job(2, 2, 0, 100)}, At(1))).empty());
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Job(3, 1, 0)}, At(2))).empty());
  EXPECT_EQ(*s.PendingReason(3),
            "needs 1 GPU; the free GPUs that would fit it are kept for job 2 (needs 2 GPUs) until "
            "jobs without an expected runtime end; a job with an expected runtime may use them "
            "meanwhile");
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Job(4, 1, 100000)}, At(3))),
              ElementsAre("start job 4 on a gpus 1"));
}

TEST(BackfillTest, JobsMayTakeWhatTheBlockedGangDoesNotNeed) {
  Scheduler s(WithBackfill());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 8)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("b", 2)}, At(0)).ok());
  ASSERT_THAT(Lines(s.Handle(JobSubmitted{Job(1, 4, 1000)}, At(0))),
              ElementsAre("start job 1 on a gpus 0,1,2,3"));
  ASSERT_THAT(Lines(s.Handle(JobSubmitted{Job(2, 2, 0)}, At(0))),
              ElementsAre("start job 2 on b gpus 0,1"));
  ASSERT_THAT(Lines(s.Handle(JobSubmitted{Job(3, 2, 0)}, At(0))),
              ElementsAre("start job 3 on a gpus 4,5"));
  // 5 GPUs on a at 1000 s (2 free + job 1's 4): one to spare.
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Job(4, 5, 0, 100)}, At(10))).empty());
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Job(5, 1, 0)}, At(20))),
              ElementsAre("start job 5 on a gpus 6"));
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Job(6, 1, 0)}, At(30))).empty());
  // b's GPUs are not what job 4 waits for: anything may take them.
  EXPECT_THAT(Lines(s.Handle(JobFinished{2}, At(40))), ElementsAre("start job 6 on b gpus 0"));
  EXPECT_THAT(Lines(s.Handle(JobFinished{1}, At(1000))),
              ElementsAre("start job 4 on a gpus 0,1,2,3,7"));
}

}  // namespace
}  // namespace gleaner::sched
