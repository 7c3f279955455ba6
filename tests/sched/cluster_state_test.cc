#include "sched/cluster_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/gpu_choice.h"
#include "sched_test_util.h"

namespace gleaner::sched {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Indices;
using testing::MakeNode;

TEST(ClusterStateTest, NodesAreBucketedByTheirFreeCount) {
  ClusterState c;
  ASSERT_TRUE(c.AddNode(MakeNode("a", 8)).ok());
  ASSERT_TRUE(c.AddNode(MakeNode("b", 4)).ok());
  EXPECT_THAT(c.NodesWithFree(0, 8), ElementsAre(0u));
  EXPECT_THAT(c.NodesWithFree(0, 4), ElementsAre(1u));
  EXPECT_EQ(c.LargestFree(0), 8);
  EXPECT_EQ(c.free_milli(), 12'000);
  c.Take(*c.FindGpu(core::GpuUuid("GPU-a-0")), 1000);
  c.Take(*c.FindGpu(core::GpuUuid("GPU-a-1")), 1000);
  c.Take(*c.FindGpu(core::GpuUuid("GPU-a-2")), 1000);
  c.Take(*c.FindGpu(core::GpuUuid("GPU-a-3")), 1000);
  EXPECT_THAT(c.NodesWithFree(0, 4), ElementsAre(0u, 1u));
  EXPECT_TRUE(c.NodesWithFree(0, 8).empty());
  EXPECT_EQ(c.LargestFree(0), 4);
  EXPECT_EQ(c.LargestNode(0), 8);  // free or not
}

TEST(ClusterStateTest, SharedGpusAreOrderedByFreeShareAndLeaveTheWholeCount) {
  ClusterState c;
  ASSERT_TRUE(c.AddNode(MakeNode("a", 2)).ok());
  c.Take(0, 300);
  c.Take(1, 800);
  EXPECT_EQ(c.FreeWhole(0, 0), 0);
  EXPECT_THAT(c.PartialGpus(0), ElementsAre(std::pair(200, 1u), std::pair(700, 0u)));
  EXPECT_EQ(c.free_milli(), 900);
  c.Give(1, 800);
  EXPECT_EQ(c.FreeWhole(0, 0), 1);
  EXPECT_THAT(c.PartialGpus(0), ElementsAre(std::pair(700, 0u)));
}

TEST(ClusterStateTest, UnlendableGpusAndLostNodesOfferNothing) {
  ClusterState c;
  ASSERT_TRUE(c.AddNode(MakeNode("a", 2)).ok());
  c.SetLendable(1, false);
  EXPECT_EQ(c.FreeWhole(0, 0), 1);
  EXPECT_EQ(c.free_milli(), 1000);
  c.SetLendable(1, true);
  EXPECT_EQ(c.FreeWhole(0, 0), 2);
  ASSERT_TRUE(c.RemoveNode(core::NodeId("a")).ok());
  EXPECT_EQ(c.free_milli(), 0);
  EXPECT_EQ(c.LargestFree(0), 0);
  EXPECT_EQ(c.LargestNode(0), 0);
  EXPECT_FALSE(c.FindGpu(core::GpuUuid("GPU-a-0")));
  EXPECT_EQ(c.RemoveNode(core::NodeId("a")).status().code(), core::StatusCode::kNotFound);
  // A host that comes back gets a fresh index.
  ASSERT_TRUE(c.AddNode(MakeNode("a", 2)).ok());
  EXPECT_EQ(c.FindNode(core::NodeId("a")), 1u);
}

TEST(ClusterStateTest, RejectsDuplicatesAndEmptyNodes) {
  ClusterState c;
  ASSERT_TRUE(c.AddNode(MakeNode("a", 1)).ok());
  EXPECT_THAT(c.AddNode(MakeNode("a", 1)).message(), HasSubstr("already in the cluster"));
  NodeSpec clash = MakeNode("b", 1);
  clash.gpus[0].uuid = core::GpuUuid("GPU-a-0");
  EXPECT_THAT(c.AddNode(clash).message(), HasSubstr("GPU GPU-a-0 is already"));
  EXPECT_THAT(c.AddNode(MakeNode("c", 0)).message(), HasSubstr("no GPUs"));
}

TEST(ClusterStateTest, ModelsAndMemorySizesAreSeparateClasses) {
  ClusterState c;
  NodeSpec mixed = MakeNode("a", 4);
  mixed.gpus[2].model = mixed.gpus[3].model = "NVIDIA L4";
  mixed.gpus[2].memory = mixed.gpus[3].memory = core::Bytes::GiB(24);
  ASSERT_TRUE(c.AddNode(mixed).ok());
  ASSERT_EQ(c.class_count(), 2u);
  EXPECT_EQ(c.FreeWhole(0, 0), 2);
  EXPECT_EQ(c.FreeWhole(0, 1), 2);
  EXPECT_EQ(c.gpu_class(1).model, "NVIDIA L4");
}

// ---- GPU choice within a node: topology ---------------------------------

TEST(GpuChoiceTest, AGangStaysOnOneIslandAndUsesTheBrokenOneFirst) {
  ClusterState c;
  ASSERT_TRUE(c.AddNode(MakeNode("a", 8, {{0, 1, 2, 3}, {4, 5, 6, 7}})).ok());
  auto two = ChooseGpus(c, 0, 0, 2);
  ASSERT_TRUE(two);
  EXPECT_THAT(Indices(c, two->gpus), ElementsAre(0, 1));
  EXPECT_TRUE(two->within_one_island);
  EXPECT_EQ(two->islands_broken, 1);
  for (GpuIndex g : two->gpus) c.Take(g, 1000);
  // Two more: the half-used island, keeping 4..7 whole for a 4-GPU gang.
  auto next = ChooseGpus(c, 0, 0, 2);
  ASSERT_TRUE(next);
  EXPECT_THAT(Indices(c, next->gpus), ElementsAre(2, 3));
  EXPECT_EQ(next->islands_broken, 0);
}

TEST(GpuChoiceTest, WithoutRoomOnOneIslandWholeIslandsGoFirst) {
  ClusterState c;
  ASSERT_TRUE(c.AddNode(MakeNode("a", 8, {{0, 1, 2, 3}, {4, 5, 6, 7}})).ok());
  c.Take(0, 1000);
  auto five = ChooseGpus(c, 0, 0, 5);
  ASSERT_TRUE(five);
  EXPECT_FALSE(five->within_one_island);
  // The whole island 4..7, then one from the broken one.
  EXPECT_THAT(Indices(c, five->gpus), ElementsAre(1, 4, 5, 6, 7));
  EXPECT_FALSE(ChooseGpus(c, 0, 0, 8));
}

TEST(GpuChoiceTest, PcieOnlyGpusAreIslandsOfOne) {
  ClusterState c;
  ASSERT_TRUE(c.AddNode(MakeNode("a", 4)).ok());
  auto one = ChooseGpus(c, 0, 0, 1);
  ASSERT_TRUE(one);
  EXPECT_TRUE(one->within_one_island);
  EXPECT_EQ(one->islands_broken, 0);
  auto two = ChooseGpus(c, 0, 0, 2);
  ASSERT_TRUE(two);
  EXPECT_FALSE(two->within_one_island);
}

}  // namespace
}  // namespace gleaner::sched
