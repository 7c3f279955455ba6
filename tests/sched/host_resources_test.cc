// Jobs that ask for host CPUs and memory are placed only where that much is
// unclaimed, and what they claim comes back when they leave.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/scheduler.h"
#include "sched_test_util.h"

namespace gleaner::sched {
namespace {

using testing::At;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Lines;
using testing::MakeHostNode;
using testing::MakeJob;
using testing::MakeNode;

JobRequest Asking(JobId id, int64_t cpu_milli, uint64_t gib = 0) {
  JobRequest j = MakeJob(id, 1);
  j.cpu_milli = cpu_milli;
  j.memory = core::Bytes::GiB(gib);
  return j;
}

TEST(HostResourcesTest, JobsGoWhereTheirCpusAreUnclaimedAndGetThemBackOnExit) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeHostNode("a", 4, 8, 64)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeHostNode("b", 4, 8, 64)}, At(0)).ok());
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Asking(1, 6000)}, At(1))),
              ElementsAre("start job 1 on a gpus 0"));
  // a has GPUs free, but only 2 CPUs.
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Asking(2, 4000)}, At(2))),
              ElementsAre("start job 2 on b gpus 0"));
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Asking(3, 4000)}, At(3))),
              ElementsAre("start job 3 on b gpus 1"));
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Asking(4, 2500)}, At(4))).empty());
  EXPECT_EQ(*s.PendingReason(4),
            "needs 1 GPU (2.5 CPUs); a has the GPUs free but only 2 CPUs unclaimed");
  // A job that asks for no CPUs is not held back by them.
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{MakeJob(5, 1)}, At(5))),
              ElementsAre("start job 5 on b gpus 2"));
  EXPECT_THAT(Lines(s.Handle(JobFinished{1}, At(6))), ElementsAre("start job 4 on a gpus 0"));
}

// The scheduler's scorer learns the workload from its jobs: these ask 8
// CPUs a GPU. The first goes to b, not to the first node that fits: on a
// it would leave a GPU with no CPU beside it. The second fills b (on a it
// would strand a's other GPU), the third takes a.
TEST(HostResourcesTest, AGpuJobLeavesANodesCpusForItsOtherGpus) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeHostNode("a", 2, 8, 64)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeHostNode("b", 2, 64, 64)}, At(0)).ok());
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Asking(1, 8000)}, At(1))),
              ElementsAre("start job 1 on b gpus 0"));
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Asking(2, 8000)}, At(2))),
              ElementsAre("start job 2 on b gpus 1"));
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Asking(3, 8000)}, At(3))),
              ElementsAre("start job 3 on a gpus 0"));
}

// A job waiting for CPUs is not starved by later small jobs that take each
// CPU as it frees: backfill keeps what it needs, as it keeps GPUs.
TEST(HostResourcesTest, BackfillKeepsTheCpusABlockedJobWaitsFor) {
  SchedulerConfig config;
  config.backfill = true;
  Scheduler s(config);
  ASSERT_TRUE(s.Handle(NodeAdded{MakeHostNode("a", 4, 8, 64)}, At(0)).ok());
  JobRequest first = Asking(1, 6000);
  first.expected_runtime = core::Seconds(1000);
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{first}, At(0))), ElementsAre("start job 1 on a gpus 0"));
  // All 8 CPUs: it fits once job 1 ends, at 1000 s.
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Asking(2, 8000)}, At(10))).empty());
  // GPUs and 2 CPUs are free, but a job running past 1000 s would keep
  // job 2 waiting then: kept off.
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Asking(3, 1000)}, At(20))).empty());
  EXPECT_THAT(*s.PendingReason(3), HasSubstr("kept for job 2"));
  // One that ends by then may use them.
  JobRequest quick = Asking(4, 1000);
  quick.expected_runtime = core::Seconds(500);
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{quick}, At(30))), ElementsAre("start job 4 on a gpus 1"));
  // One asking no CPUs takes a spare GPU.
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{MakeJob(5, 1)}, At(40))),
              ElementsAre("start job 5 on a gpus 2"));
  EXPECT_TRUE(Lines(s.Handle(JobFinished{4}, At(530))).empty());
  EXPECT_THAT(Lines(s.Handle(JobFinished{1}, At(1000))), ElementsAre("start job 2 on a gpus 0"));
}

TEST(HostResourcesTest, MemoryIsClaimedLikeCpus) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeHostNode("a", 2, 64, 32)}, At(0)).ok());
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Asking(1, 0, 24)}, At(1))),
              ElementsAre("start job 1 on a gpus 0"));
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Asking(2, 1000, 16)}, At(2))).empty());
  EXPECT_EQ(*s.PendingReason(2),
            "needs 1 GPU (1 CPU, 16.0 GiB of memory); a has the GPUs free "
            "but only 8.0 GiB of memory unclaimed");
  EXPECT_THAT(Lines(s.Handle(JobFailed{1, "exit 1"}, At(3))),
              ElementsAre("start job 2 on a gpus 0"));
}

TEST(HostResourcesTest, AHostThatReportsNoSizeClaimsNothing) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 2)}, At(0)).ok());
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Asking(1, 500'000, 4096)}, At(1))),
              ElementsAre("start job 1 on a gpus 0"));
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Asking(2, 500'000, 4096)}, At(2))),
              ElementsAre("start job 2 on a gpus 1"));
}

TEST(HostResourcesTest, MoreThanAnyNodeHasIsRefusedAtOnce) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeHostNode("a", 2, 8, 64)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeHostNode("b", 2, 16, 32)}, At(0)).ok());
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Asking(1, 24'000)}, At(1))),
              ElementsAre("reject job 1: asks 24 CPUs on one node; the largest node here has 16 "
                          "CPUs"));
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Asking(2, 1000, 100)}, At(1))),
              ElementsAre("reject job 2: asks 100.0 GiB of memory on one node; the largest node "
                          "here has 64.0 GiB"));
  // Each fits some node, though no node has both: it waits, never starts
  // on a node short of either.
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Asking(3, 12'000, 48)}, At(1))).empty());
  // A node that reports no size is never short: the waiting job starts
  // there, and nothing is too large now.
  EXPECT_THAT(Lines(s.Handle(NodeAdded{MakeNode("c", 2)}, At(2))),
              ElementsAre("start job 3 on c gpus 0"));
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Asking(4, 24'000)}, At(3))),
              ElementsAre("start job 4 on c gpus 1"));
}

TEST(HostResourcesTest, PreemptionFreesTheCpusAVictimHeld) {
  SchedulerConfig config;
  config.min_runtime = core::Seconds(0);
  Scheduler s(config);
  ASSERT_TRUE(s.Handle(NodeAdded{MakeHostNode("a", 2, 8, 64)}, At(0)).ok());
  JobRequest lender = Asking(1, 6000);
  lender.priority_class = PriorityClass::kOpportunistic;
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{lender}, At(1))), ElementsAre("start job 1 on a gpus 0"));
  // A GPU is free; the CPUs are not, and only the victim's give them back.
  JobRequest critical = Asking(2, 4000);
  critical.priority_class = PriorityClass::kCritical;
  critical.preemptible = false;
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{critical}, At(100))),
              ElementsAre(HasSubstr("preempt job 1: for job 2")));
  EXPECT_THAT(Lines(s.Handle(JobFailed{1, "preempted"}, At(101))),
              ElementsAre(HasSubstr("requeue job 1: for job 2"), "start job 2 on a gpus 0"));
}

TEST(HostResourcesTest, AGangCountsOnlyNodesWithTheCpusForAMember) {
  SchedulerConfig config;
  Scheduler s(config);
  ASSERT_TRUE(s.Handle(NodeAdded{MakeHostNode("a", 2, 8, 64)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeHostNode("b", 2, 8, 64)}, At(0)).ok());
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Asking(1, 6000)}, At(1))),
              ElementsAre("start job 1 on a gpus 0"));
  JobRequest gang = Asking(2, 4000);
  gang.nodes = 2;
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{gang}, At(2))).empty());
  EXPECT_EQ(*s.PendingReason(2),
            "needs 2 nodes with 1 GPU (4 CPUs) free each; 1 node has that many now");
  EXPECT_THAT(Lines(s.Handle(JobFinished{1}, At(3))),
              ElementsAre(HasSubstr("start job 2 on a gpus 0 + b gpus 0")));
}

}  // namespace
}  // namespace gleaner::sched
