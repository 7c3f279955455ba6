// Elastic requests: a GPU range, as many as are idle at the start, shrunk
// (ResizeJob) before anyone is preempted when GPUs are taken back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/scheduler.h"
#include "sched_test_util.h"

namespace gleaner::sched {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeJob;
using testing::MakeNode;

using testing::At;
using testing::kT0;
using testing::Lines;

JobRequest Elastic(JobId id, int least, int most, bool can_shrink) {
  JobRequest j = MakeJob(id, least);
  j.max_gpus = most;
  j.can_shrink = can_shrink;
  return j;
}

SchedulerConfig Unprotected() {
  SchedulerConfig config;
  config.min_runtime = core::Seconds(0);
  return config;
}

// GPUs that become idle in one sampling pass reach the scheduler together:
// the elastic job sees both, where one event at a time would start it on
// the first. An unknown GPU in the batch changes nothing.
TEST(ElasticTest, VerdictsOfOnePassArriveTogether) {
  const auto cluster = [] {
    NodeSpec n = MakeNode("a", 2);
    for (GpuSpec& g : n.gpus) g.lendable = false;
    return n;
  };
  const GpuVerdictChanged idle0{core::GpuUuid("GPU-a-0"), true, "", {}};
  const GpuVerdictChanged idle1{core::GpuUuid("GPU-a-1"), true, "", {}};
  Scheduler together;
  ASSERT_TRUE(together.Handle(NodeAdded{cluster()}, At(0)).ok());
  ASSERT_TRUE(together.Handle(JobSubmitted{Elastic(1, 1, 2, true)}, At(0)).ok());
  const GpuVerdictChanged unknown{core::GpuUuid("GPU-z-9"), true, "", {}};
  EXPECT_FALSE(together.Handle(GpuVerdictsChanged{{idle0, unknown}}, At(1)).ok());
  EXPECT_EQ(together.Phase(1), JobPhase::kPending);
  EXPECT_THAT(Lines(together.Handle(GpuVerdictsChanged{{idle0, idle1}}, At(1))),
              ElementsAre("start job 1 on a gpus 0,1"));

  Scheduler one_by_one;
  ASSERT_TRUE(one_by_one.Handle(NodeAdded{cluster()}, At(0)).ok());
  ASSERT_TRUE(one_by_one.Handle(JobSubmitted{Elastic(1, 1, 2, true)}, At(0)).ok());
  EXPECT_THAT(Lines(one_by_one.Handle(idle0, At(1))), ElementsAre("start job 1 on a gpus 0"));
}

TEST(ElasticTest, StartsWithWhatIsIdleWithinItsRange) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 4)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("b", 2)}, At(0)).ok());
  ASSERT_THAT(Lines(s.Handle(JobSubmitted{MakeJob(1, 1)}, At(0))),
              ElementsAre("start job 1 on b gpus 0"));
  // 4 idle on a beat 1 on b; the range allows 8, the node has 4.
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Elastic(2, 2, 8, false)}, At(0))),
              ElementsAre("start job 2 on a gpus 0,1,2,3"));
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Elastic(3, 2, 4, false)}, At(0))), ElementsAre());
  EXPECT_EQ(*s.PendingReason(3), "needs 2 to 4 GPUs on one node; the largest free set is 1 on b");
  // A quota caps the range too.
  SchedulerConfig capped;
  capped.projects["ml"] = {0, 3, 1};
  Scheduler q(capped);
  ASSERT_TRUE(q.Handle(NodeAdded{MakeNode("a", 8)}, At(0)).ok());
  JobRequest ml = Elastic(1, 1, 8, false);
  ml.project = "ml";
  EXPECT_THAT(Lines(q.Handle(JobSubmitted{ml}, At(0))), ElementsAre("start job 1 on a gpus 0,1,2"));
}

TEST(ElasticTest, ShrunkBeforeAnyoneIsPreempted) {
  Scheduler s(Unprotected());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 4)}, At(0)).ok());
  JobRequest cheap = MakeJob(1, 1);
  cheap.priority_class = PriorityClass::kOpportunistic;
  ASSERT_THAT(Lines(s.Handle(JobSubmitted{cheap}, At(0))), ElementsAre("start job 1 on a gpus 0"));
  ASSERT_THAT(Lines(s.Handle(JobSubmitted{Elastic(2, 1, 3, true)}, At(0))),
              ElementsAre("start job 2 on a gpus 1,2,3"));
  JobRequest critical = MakeJob(3, 2);
  critical.priority_class = PriorityClass::kCritical;
  // The opportunistic job would be the cheapest victim, but shrinking the
  // elastic one by two GPUs loses nobody's place.
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{critical}, At(100))),
              ElementsAre("resize job 2 to a gpus 1: for job 3 (critical, needs 2 GPUs): "
                          "critical work outranks normal"));
  EXPECT_EQ(s.Phase(2), JobPhase::kRunning);
  EXPECT_THAT(s.Allocation(2)->gpu_indices, ElementsAre(1, 2, 3));  // until it has shrunk
  EXPECT_THAT(Lines(s.Handle(JobResized{2}, At(110))), ElementsAre("start job 3 on a gpus 2,3"));
  EXPECT_THAT(s.Allocation(2)->gpu_indices, ElementsAre(1));
  EXPECT_EQ(s.quotas().used_milli(""), 4000);
  // At its least it can only be preempted.
  JobRequest more = MakeJob(4, 2);
  more.priority_class = PriorityClass::kCritical;
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{more}, At(200))),
              ElementsAre(HasSubstr("preempt job 1:"), HasSubstr("preempt job 2:")));
}

TEST(ElasticTest, AnOwnerTakingAGpuBackShrinksItWhileItCan) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 4)}, At(0)).ok());
  ASSERT_EQ(Lines(s.Handle(JobSubmitted{Elastic(1, 2, 4, true)}, At(0))).size(), 1u);
  const auto claim = [&](int gpu, int at) {
    return Lines(s.Handle(
        GpuVerdictChanged{
            core::GpuUuid("GPU-a-" + std::to_string(gpu)), false, "owner returned", {}},
        At(at)));
  };
  EXPECT_THAT(claim(3, 10), ElementsAre("resize job 1 to a gpus 0,1,2: GPU-a-3 (a gpu 3) is no "
                                        "longer lendable: owner returned"));
  // A second claim before it has shrunk takes it back whole.
  EXPECT_THAT(claim(0, 11), ElementsAre(HasSubstr("preempt job 1: GPU-a-0")));
  EXPECT_EQ(s.Handle(JobResized{1}, At(12)).status().code(), core::StatusCode::kFailedPrecondition);
  // Requeued, it starts again at once on the two lendable GPUs.
  EXPECT_THAT(Lines(s.Handle(JobFailed{1, "killed"}, At(13))),
              ElementsAre(HasSubstr("requeue job 1"), "start job 1 on a gpus 1,2"));
  EXPECT_THAT(claim(2, 20), ElementsAre(HasSubstr("preempt job 1: GPU-a-2")));  // at its least
}

TEST(ElasticTest, ABadRangeIsRejectedWithTheFix) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 4)}, At(0)).ok());
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Elastic(1, 3, 2, true)}, At(0))),
              ElementsAre(HasSubstr("max_gpus: at least gpus (3")));
  JobRequest shared = Elastic(2, 1, 2, false);
  shared.gpu_milli = 500;
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{shared}, At(0))),
              ElementsAre(HasSubstr("a range of GPUs is for whole GPUs")));
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Elastic(3, 6, 8, true)}, At(0))),
              ElementsAre(HasSubstr("needs 6 to 8 GPUs on one node; the largest node here has 4")));
}

}  // namespace
}  // namespace gleaner::sched
