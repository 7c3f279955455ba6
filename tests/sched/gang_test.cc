// Gangs over several nodes: all-or-nothing placement with rack preference,
// refusal of gangs the cluster can never hold, and a gang that leaves,
// requeues and is adopted as one.
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
using testing::MakeJob;
using testing::MakeNode;

NodeSpec InRack(NodeSpec node, const std::string& rack) {
  node.rack = rack;
  return node;
}

JobRequest Gang(JobId id, int nodes, int gpus_each) {
  JobRequest j = MakeJob(id, gpus_each);
  j.nodes = nodes;
  return j;
}

// Racks r1 (a, b, c) and r2 (d, e), 4 GPUs a node.
Scheduler FiveNodes() {
  Scheduler s;
  for (const char* n : {"a", "b", "c"}) {
    EXPECT_TRUE(s.Handle(NodeAdded{InRack(MakeNode(n, 4), "r1")}, At(0)).ok());
  }
  for (const char* n : {"d", "e"}) {
    EXPECT_TRUE(s.Handle(NodeAdded{InRack(MakeNode(n, 4), "r2")}, At(0)).ok());
  }
  return s;
}

TEST(GangTest, AGangTakesWholeNodesOfTheTightestRackThatHoldsIt) {
  Scheduler s = FiveNodes();
  // Both racks hold 2 nodes; r2, with only 2, is the tighter: r1 stays
  // whole for a gang of 3.
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Gang(1, 2, 4)}, At(1))),
              ElementsAre("start job 1 on d gpus 0,1,2,3 + e gpus 0,1,2,3"));
  const auto a = s.Allocation(1);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->gang.size(), 2u);
  EXPECT_EQ(a->gpus.size(), 8u);
  EXPECT_EQ(a->why, "");
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Gang(2, 3, 2)}, At(2))),
              ElementsAre("start job 2 on a gpus 0,1 + b gpus 0,1 + c gpus 0,1"));
}

TEST(GangTest, AGangSpansRacksOnlyWhenNoneHoldsItAndSaysSo) {
  Scheduler s = FiveNodes();
  auto actions = s.Handle(JobSubmitted{Gang(1, 4, 4)}, At(1));
  ASSERT_TRUE(actions.ok());
  ASSERT_EQ(actions->size(), 1u);
  const auto& start = std::get<StartJob>(actions->front());
  EXPECT_EQ(start.gang.size(), 4u);
  EXPECT_EQ(start.why,
            "spans racks r1 (3 nodes), r2 (1 node): no one rack has 4 nodes with 4 free GPUs");
}

TEST(GangTest, AllOrNothingAGangWaitsUntilEveryMemberHasRoom) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 2)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("b", 2)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(JobSubmitted{MakeJob(1, 1)}, At(0)).ok());  // on a or b
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Gang(2, 2, 2)}, At(1))), ElementsAre());
  EXPECT_EQ(s.running_count(), 1u);
  auto why = s.PendingReason(2);
  ASSERT_TRUE(why.ok());
  EXPECT_EQ(*why, "needs 2 nodes with 2 GPUs free each; 1 node has that many now");
  EXPECT_THAT(Lines(s.Handle(JobFinished{1}, At(2))),
              ElementsAre("start job 2 on a gpus 0,1 + b gpus 0,1"));
}

// The first gang that cannot start keeps the nodes that could hold a
// member now, pass after pass, while the rest drain: a job behind it takes
// GPUs elsewhere or waits, so the gang is not starved of the nodes it has.
TEST(GangTest, TheGangAtTheHeadOfTheQueueKeepsTheNodesThatHaveDrained) {
  Scheduler s;
  for (const char* n : {"a", "b", "c"})
    ASSERT_TRUE(s.Handle(NodeAdded{MakeNode(n, 2)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(JobSubmitted{MakeJob(1, 2)}, At(0)).ok());  // a
  ASSERT_TRUE(s.Handle(JobSubmitted{MakeJob(2, 2)}, At(0)).ok());  // b
  ASSERT_TRUE(s.Handle(JobSubmitted{MakeJob(3, 1)}, At(0)).ok());  // c
  ASSERT_TRUE(s.Handle(JobSubmitted{MakeJob(4, 1)}, At(0)).ok());  // c
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Gang(5, 2, 2)}, At(1))), ElementsAre());
  EXPECT_THAT(Lines(s.Handle(JobFinished{1}, At(2))), ElementsAre());  // a is kept for it
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{MakeJob(7, 1)}, At(3))), ElementsAre());
  auto why = s.PendingReason(7);
  ASSERT_TRUE(why.ok());
  EXPECT_THAT(*why, HasSubstr("kept for job 5 (needs 2 GPUs)"));
  EXPECT_THAT(Lines(s.Handle(JobFinished{3}, At(4))), ElementsAre("start job 7 on c gpus 0"));
  EXPECT_THAT(Lines(s.Handle(JobFinished{2}, At(5))),
              ElementsAre("start job 5 on a gpus 0,1 + b gpus 0,1"));
}

TEST(GangTest, AGangLargerThanTheClusterOrAnyRackIsRefusedWithTheReason) {
  Scheduler s = FiveNodes();
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Gang(1, 6, 4)}, At(1))),
              ElementsAre("reject job 1: needs 6 nodes with 4 GPUs each; the cluster has 5 such "
                          "nodes"));
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Gang(2, 2, 8)}, At(1))),
              ElementsAre("reject job 2: needs 2 nodes with 8 GPUs each; the cluster has 0 such "
                          "nodes"));
  JobRequest one_rack = Gang(3, 4, 1);
  one_rack.one_rack = true;
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{one_rack}, At(1))),
              ElementsAre("reject job 3: needs 4 nodes with 1 GPU each under one rack; the "
                          "largest rack, r1, has 3; drop one_rack to let it span racks"));
  one_rack.id = 4;
  one_rack.nodes = 3;
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{one_rack}, At(1))),
              ElementsAre("start job 4 on a gpus 0 + b gpus 0 + c gpus 0"));
}

TEST(GangTest, AnOwnerReturningToOneMemberVacatesTheWholeGangWhichRequeuesAsOne) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 2)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("b", 2)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(JobSubmitted{Gang(1, 2, 2)}, At(0)).ok());
  EXPECT_EQ(s.cluster().free_milli(), 0);
  EXPECT_THAT(
      Lines(s.Handle(GpuVerdictChanged{core::GpuUuid("GPU-b-1"), false, "owner back", {}}, At(10))),
      ElementsAre(HasSubstr("preempt job 1: GPU-b-1 (b gpu 1) is no longer lendable")));
  EXPECT_EQ(s.Phase(1), JobPhase::kVacating);
  // Its exit frees both nodes; it waits for two nodes with room again.
  EXPECT_THAT(Lines(s.Handle(JobFailed{1, "vacated"}, At(20))),
              ElementsAre(HasSubstr("requeue job 1")));
  EXPECT_EQ(s.cluster().free_milli(), 3000);
  EXPECT_EQ(s.Phase(1), JobPhase::kPending);
  EXPECT_THAT(
      Lines(s.Handle(GpuVerdictChanged{core::GpuUuid("GPU-b-1"), true, "idle again", {}}, At(30))),
      ElementsAre("start job 1 on a gpus 0,1 + b gpus 0,1"));
}

TEST(GangTest, ANodeLostRequeuesTheWholeGangAndFreesItsOtherNodes) {
  Scheduler s;
  for (const char* n : {"a", "b", "c"})
    ASSERT_TRUE(s.Handle(NodeAdded{MakeNode(n, 1)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(JobSubmitted{Gang(1, 2, 1)}, At(0)).ok());
  const auto a = s.Allocation(1);
  ASSERT_TRUE(a);
  const core::NodeId lost = a->gang.back();
  // It is placed again at once, on the node left and the one that was idle.
  const auto lines = Lines(s.Handle(NodeLost{lost, "agent gone"}, At(5)));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr("requeue job 1: node " + lost.str() + " lost: agent gone"));
  EXPECT_THAT(lines[1], HasSubstr("start job 1 on "));
  EXPECT_THAT(lines[1], ::testing::Not(HasSubstr(lost.str() + " gpus")));
  EXPECT_EQ(s.cluster().free_milli(), 0);
}

TEST(GangTest, ARunningGangIsAdoptedWithItsGpusOnEveryNode) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 2)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("b", 2)}, At(0)).ok());
  JobRunning running{Gang(7, 2, 2),
                     core::NodeId("a"),
                     {core::GpuUuid("GPU-a-0"), core::GpuUuid("GPU-a-1"), core::GpuUuid("GPU-b-0"),
                      core::GpuUuid("GPU-b-1")},
                     At(0),
                     At(0)};
  ASSERT_TRUE(s.Handle(running, At(1)).ok());
  EXPECT_EQ(s.cluster().free_milli(), 0);
  const auto a = s.Allocation(7);
  ASSERT_TRUE(a);
  EXPECT_EQ(ToString(*a), "start job 7 on a gpus 0,1 + b gpus 0,1");
  ASSERT_TRUE(s.Handle(JobFinished{7}, At(2)).ok());
  EXPECT_EQ(s.cluster().free_milli(), 4000);
}

TEST(GangTest, AGangIsNeitherElasticNorFractional) {
  JobRequest j = Gang(1, 2, 2);
  j.max_gpus = 4;
  EXPECT_THAT(ValidateRequestShape(j).message(), HasSubstr("a gang over several nodes"));
  j = Gang(1, 1, 2);
  j.one_rack = true;
  EXPECT_THAT(ValidateRequestShape(j).message(), HasSubstr("one_rack: only for a gang"));
}

}  // namespace
}  // namespace gleaner::sched
