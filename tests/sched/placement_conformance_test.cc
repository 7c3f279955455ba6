// Every PlacementScorer, run through the placement search, must keep these
// promises; scorer-specific preferences are tested below the typed suite.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tuple>

#include "sched/frag_score.h"
#include "sched/placement.h"
#include "sched_test_util.h"

namespace gleaner::sched {
namespace {

using ::testing::ElementsAre;
using testing::Indices;
using testing::MakeHostNode;
using testing::MakeJob;
using testing::MakeNode;

void TakeAll(ClusterState& c, const std::string& node, std::initializer_list<int> indices,
             int milli = 1000) {
  const NodeState& n = c.node(*c.FindNode(core::NodeId(node)));
  for (int i : indices) c.Take(n.gpus[static_cast<size_t>(i)], milli);
}

// `count` jobs as the workload profile sees them.
std::vector<FragPod> Pods(size_t count, int gpus, int milli = 1000, int64_t cpu_milli = 0,
                          uint32_t classes = ~0u) {
  FragPod p;
  p.num_gpu = gpus;
  p.gpu_milli = milli;
  p.cpu_milli = cpu_milli;
  p.model_mask = classes;
  return std::vector<FragPod>(count, p);
}

// The profile of a mixed workload: whole GPUs, pairs, whole nodes and
// halves, some asking CPUs.
WorkloadProfile MixedProfile() {
  std::vector<FragPod> pods;
  for (const auto& one : {Pods(1, 1, 1000, 8000), Pods(1, 1), Pods(1, 2, 1000, 16000),
                          Pods(1, 8, 1000, 64000), Pods(1, 1, 500, 4000)}) {
    pods.insert(pods.end(), one.begin(), one.end());
  }
  return ProfileWorkload(pods, {64});
}

// The gleaner scorer once it has learned a workload: the experiment's score.
class LearnedGleanerScorer final : public PlacementScorer {
 public:
  LearnedGleanerScorer() { scorer_.Learn(MixedProfile(), {false}); }
  bool LearnsWorkload() const override { return true; }
  double Cost(const PlacementCandidate& c) const override { return scorer_.Cost(c); }
  std::string_view Name() const override { return "gleaner, learned"; }

 private:
  FragmentationAwareScorer scorer_;
};

template <typename Scorer>
class PlacementConformanceTest : public ::testing::Test {
 protected:
  std::optional<Placement> Place(const JobRequest& job) {
    return FindPlacement(cluster_, job, AllowedClasses(cluster_, job), scorer_, 16);
  }
  std::string NodeOf(const Placement& p) { return cluster_.node(p.node).id.str(); }

  ClusterState cluster_;
  Scorer scorer_;
};

using Scorers = ::testing::Types<BestFitScorer, FragmentationAwareScorer, LearnedGleanerScorer>;
TYPED_TEST_SUITE(PlacementConformanceTest, Scorers);

TYPED_TEST(PlacementConformanceTest, AnExactFitBeatsAnEmptyNode) {
  ASSERT_TRUE(this->cluster_.AddNode(MakeNode("empty", 8)).ok());
  ASSERT_TRUE(this->cluster_.AddNode(MakeNode("busy", 8)).ok());
  TakeAll(this->cluster_, "busy", {0, 1, 2, 3, 4, 5});
  auto p = this->Place(MakeJob(1, 2));
  ASSERT_TRUE(p);
  EXPECT_EQ(this->NodeOf(*p), "busy");
  EXPECT_THAT(Indices(this->cluster_, p->gpus), ElementsAre(6, 7));
}

TYPED_TEST(PlacementConformanceTest, AGangGetsAllItsGpusOnOneNodeOrNothing) {
  ASSERT_TRUE(this->cluster_.AddNode(MakeNode("a", 4)).ok());
  ASSERT_TRUE(this->cluster_.AddNode(MakeNode("b", 4)).ok());
  TakeAll(this->cluster_, "a", {0});
  TakeAll(this->cluster_, "b", {0});
  const JobRequest four = MakeJob(1, 4);
  EXPECT_FALSE(this->Place(four));  // 6 free in all, but 3 per node
  const NoFit why = DescribeNoFit(this->cluster_, four, AllowedClasses(this->cluster_, four));
  EXPECT_EQ(why.largest_free, 3);
  EXPECT_EQ(why.node, 0u);
  auto three = this->Place(MakeJob(2, 3));
  ASSERT_TRUE(three);
  EXPECT_EQ(three->gpus.size(), 3u);
}

TYPED_TEST(PlacementConformanceTest, ConstraintsAndVerdictsAreRespected) {
  ASSERT_TRUE(this->cluster_.AddNode(MakeNode("a100", 2)).ok());
  ASSERT_TRUE(this->cluster_.AddNode(MakeNode("h100", 2, {}, "NVIDIA H100 80GB HBM3", 80)).ok());
  ASSERT_TRUE(this->cluster_.AddNode(MakeNode("l4", 2, {}, "NVIDIA L4", 24)).ok());
  JobRequest h100 = MakeJob(1, 1);
  h100.gpu_models = {"H100"};
  auto p = this->Place(h100);
  ASSERT_TRUE(p);
  EXPECT_EQ(this->NodeOf(*p), "h100");
  JobRequest big = MakeJob(2, 2);
  big.min_gpu_memory = core::Bytes::GiB(40);
  this->cluster_.SetLendable(*this->cluster_.FindGpu(core::GpuUuid("GPU-a100-0")), false);
  TakeAll(this->cluster_, "h100", {0});
  // The L4s are too small, an A100 is not lendable, an H100 is taken.
  EXPECT_FALSE(this->Place(big));
  JobRequest small = MakeJob(3, 2);
  small.min_gpu_memory = core::Bytes::GiB(16);
  p = this->Place(small);
  ASSERT_TRUE(p);
  EXPECT_EQ(this->NodeOf(*p), "l4");
}

TYPED_TEST(PlacementConformanceTest, AFractionGoesToASharedGpuBeforeSplittingAWholeOne) {
  ASSERT_TRUE(this->cluster_.AddNode(MakeNode("a", 4)).ok());
  ASSERT_TRUE(this->cluster_.AddNode(MakeNode("b", 4)).ok());
  TakeAll(this->cluster_, "b", {2}, 600);
  auto p = this->Place(MakeJob(1, 1, 300));
  ASSERT_TRUE(p);
  EXPECT_EQ(this->NodeOf(*p), "b");
  EXPECT_THAT(Indices(this->cluster_, p->gpus), ElementsAre(2));
  EXPECT_EQ(p->milli_per_gpu, 300);
  // Too big for the shared GPU's 400: a whole GPU of the fuller node.
  p = this->Place(MakeJob(2, 1, 500));
  ASSERT_TRUE(p);
  EXPECT_EQ(this->NodeOf(*p), "b");
  EXPECT_NE(Indices(this->cluster_, p->gpus), std::vector<int>{2});
}

TYPED_TEST(PlacementConformanceTest, TiesGoToTheLowerNodeAndTheSameInputsGiveTheSameAnswer) {
  for (const char* n : {"n0", "n1", "n2"}) ASSERT_TRUE(this->cluster_.AddNode(MakeNode(n, 8)).ok());
  auto first = this->Place(MakeJob(1, 3));
  auto again = this->Place(MakeJob(1, 3));
  ASSERT_TRUE(first && again);
  EXPECT_EQ(this->NodeOf(*first), "n0");
  EXPECT_EQ(first->gpus, again->gpus);
}

TYPED_TEST(PlacementConformanceTest, AGangThatFitsOneNvlinkIslandGetsOne) {
  ASSERT_TRUE(this->cluster_.AddNode(MakeNode("a", 8, {{0, 1, 2, 3}, {4, 5, 6, 7}})).ok());
  TakeAll(this->cluster_, "a", {0});
  auto p = this->Place(MakeJob(1, 4));
  ASSERT_TRUE(p);
  EXPECT_THAT(Indices(this->cluster_, p->gpus), ElementsAre(4, 5, 6, 7));
}

TYPED_TEST(PlacementConformanceTest, HostCpusAndMemoryAreRespected) {
  ASSERT_TRUE(this->cluster_.AddNode(MakeHostNode("small", 4, 4, 512)).ok());
  ASSERT_TRUE(this->cluster_.AddNode(MakeHostNode("roomy", 4, 64, 32)).ok());
  JobRequest cpus = MakeJob(1, 1);
  cpus.cpu_milli = 8000;
  auto p = this->Place(cpus);
  ASSERT_TRUE(p);
  EXPECT_EQ(this->NodeOf(*p), "roomy");
  JobRequest memory = MakeJob(2, 1);
  memory.memory = core::Bytes::GiB(64);
  p = this->Place(memory);
  ASSERT_TRUE(p);
  EXPECT_EQ(this->NodeOf(*p), "small");
  JobRequest both = MakeJob(3, 1);
  both.cpu_milli = 8000;
  both.memory = core::Bytes::GiB(64);
  EXPECT_FALSE(this->Place(both));
}

// ---- what distinguishes the scorers -------------------------------------

// Two nodes of 2 GPUs; the workload's GPU jobs ask 8 CPUs a GPU. A has 8
// CPUs, B 64. Best fit (and the gleaner scorer before it has learned the
// workload) sees two alike nodes and takes the first; once learned, it
// leaves A's CPUs to A's other GPU.
TEST(PlacementScorerTest, TheLearnedGleanerScorerKeepsANodesCpusForItsGpus) {
  ClusterState c;
  ASSERT_TRUE(c.AddNode(MakeHostNode("a", 2, 8)).ok() && c.AddNode(MakeHostNode("b", 2, 64)).ok());
  JobRequest job = MakeJob(1, 1);
  job.cpu_milli = 8000;
  const auto allowed = AllowedClasses(c, job);
  FragmentationAwareScorer gleaner;
  auto before = FindPlacement(c, job, allowed, gleaner, 16);
  auto packed = FindPlacement(c, job, allowed, BestFitScorer(), 16);
  gleaner.Learn(ProfileWorkload(Pods(1, 1, 1000, 8000), {2}), {false});
  auto learned = FindPlacement(c, job, allowed, gleaner, 16);
  ASSERT_TRUE(before && packed && learned);
  EXPECT_EQ(c.node(before->node).id.str(), "a");
  EXPECT_EQ(c.node(packed->node).id.str(), "a");
  EXPECT_EQ(c.node(learned->node).id.str(), "b");
}

// H100 node: GPU 0 half taken; A100 node: both GPUs free. Three in four
// GPU jobs are pinned to H100, which has 1,500 of the 3,500 milli free:
// oversubscribed. FGD's score alone would fill the half-taken H100 (62
// against 56); a half-GPU job that may run anywhere goes to the A100, one
// pinned to H100 still goes there.
TEST(PlacementScorerTest, TheLearnedGleanerScorerKeepsOffAClassPinnedJobsOversubscribe) {
  ClusterState c;
  ASSERT_TRUE(c.AddNode(MakeNode("h100", 2, {}, "NVIDIA H100 80GB HBM3", 80)).ok());
  ASSERT_TRUE(c.AddNode(MakeNode("a100", 2)).ok());
  c.Take(*c.FindGpu(core::GpuUuid("GPU-h100-0")), 500);
  const ClassId h100 = c.gpu(*c.FindGpu(core::GpuUuid("GPU-h100-1"))).gpu_class;
  std::vector<FragPod> jobs = Pods(3, 1, 1000, 0, 1u << h100);
  jobs.push_back(Pods(1, 1).front());
  const WorkloadProfile profile = ProfileWorkload(jobs, {2, 2});
  const std::vector<bool> oversubscribed = OversubscribedModels(
      profile, h100 == 0 ? std::vector<int64_t>{1500, 2000} : std::vector<int64_t>{2000, 1500});
  ASSERT_TRUE(oversubscribed[h100]);
  FragmentationAwareScorer gleaner;
  gleaner.Learn(profile, oversubscribed);
  FragmentationAwareScorer fgd_only;  // the same workload, no class oversubscribed
  fgd_only.Learn(profile, {false, false});
  const JobRequest half = MakeJob(1, 1, 500);
  auto anywhere = FindPlacement(c, half, AllowedClasses(c, half), gleaner, 16);
  auto by_fgd = FindPlacement(c, half, AllowedClasses(c, half), fgd_only, 16);
  JobRequest pinned = half;
  pinned.gpu_models = {"H100"};
  auto on_h100 = FindPlacement(c, pinned, AllowedClasses(c, pinned), gleaner, 16);
  ASSERT_TRUE(anywhere && by_fgd && on_h100);
  EXPECT_EQ(c.node(anywhere->node).id.str(), "a100");
  EXPECT_EQ(c.node(by_fgd->node).id.str(), "h100");
  EXPECT_EQ(c.node(on_h100->node).id.str(), "h100");
}

// FGD's score ties when the workload's CPU-heavy jobs are too rare to be
// a typical shape; then the CPU shortage decides. 99 jobs ask 1 CPU per
// GPU, one 64: 1.63 CPUs per GPU on average. Node b (added first) has 64
// CPUs, a only 2: a job asking 1 CPU goes to a, whose GPUs are short of
// CPU anyway and less so after; best fit takes b, the first.
TEST(PlacementScorerTest, TheLearnedGleanerScorerBreaksTiesByTheCpuShortage) {
  ClusterState c;
  ASSERT_TRUE(c.AddNode(MakeHostNode("b", 2, 64)).ok() && c.AddNode(MakeHostNode("a", 2, 2)).ok());
  std::vector<FragPod> jobs = Pods(99, 1, 1000, 1000);
  jobs.push_back(Pods(1, 1, 1000, 64000).front());
  FragmentationAwareScorer gleaner;
  gleaner.Learn(ProfileWorkload(jobs, {4}), {false});
  JobRequest job = MakeJob(1, 1);
  job.cpu_milli = 1000;
  auto learned = FindPlacement(c, job, AllowedClasses(c, job), gleaner, 16);
  auto packed = FindPlacement(c, job, AllowedClasses(c, job), BestFitScorer(), 16);
  ASSERT_TRUE(learned && packed);
  EXPECT_EQ(c.node(learned->node).id.str(), "a");
  EXPECT_EQ(c.node(packed->node).id.str(), "b");
}

// The candidate a scorer sees describes the node as the experiment does:
// the chosen GPUs first, the node's other GPUs of the class after, a GPU
// that may not be lent as full.
TEST(PlacementScorerTest, TheCandidateDescribesTheNodeAsTheExperimentSeesIt) {
  class Recorder final : public PlacementScorer {
   public:
    double Cost(const PlacementCandidate& c) const override {
      seen.push_back(c);
      return 0;
    }
    std::string_view Name() const override { return "recorder"; }
    bool LearnsWorkload() const override { return true; }
    mutable std::vector<PlacementCandidate> seen;
  };
  ClusterState c;
  ASSERT_TRUE(c.AddNode(MakeHostNode("n", 4, 32)).ok());
  c.Take(*c.FindGpu(core::GpuUuid("GPU-n-0")), 1000);
  c.SetLendable(*c.FindGpu(core::GpuUuid("GPU-n-3")), false);
  Recorder r;
  JobRequest job = MakeJob(1, 1);
  job.cpu_milli = 2000;
  ASSERT_TRUE(FindPlacement(c, job, AllowedClasses(c, job), r, 16));
  ASSERT_EQ(r.seen.size(), 1u);
  const PlacementCandidate& seen = r.seen.front();
  EXPECT_EQ(seen.node.gpus, 4);
  EXPECT_EQ(seen.gpu_mask, 0b0001);  // the chosen one first: GPU 1
  EXPECT_EQ(seen.node.gpu_free[0], 1000);
  EXPECT_EQ(seen.node.TotalGpuFree(), 2000);  // GPU 0 taken, GPU 3 not lendable
  EXPECT_EQ(seen.node.cpu_free, 32000);
  EXPECT_EQ(seen.pod.cpu_milli, 2000);
  EXPECT_EQ(seen.pod.num_gpu, 1);
}

TEST(PlacementScorerTest, BestFitPacksWhereTheGleanerScorerKeepsTheGangOnNvlink) {
  ClusterState c;
  ASSERT_TRUE(c.AddNode(MakeNode("pcie", 4)).ok());
  ASSERT_TRUE(c.AddNode(MakeNode("nvlink", 8, {{0, 1, 2, 3}, {4, 5, 6, 7}})).ok());
  const JobRequest four = MakeJob(1, 4);
  const auto allowed = AllowedClasses(c, four);
  auto packed = FindPlacement(c, four, allowed, BestFitScorer(), 16);
  auto linked = FindPlacement(c, four, allowed, FragmentationAwareScorer(), 16);
  ASSERT_TRUE(packed && linked);
  EXPECT_EQ(c.node(packed->node).id.str(), "pcie");
  EXPECT_EQ(c.node(linked->node).id.str(), "nvlink");
}

TEST(PlacementScorerTest, TheGleanerScorerAvoidsBreakingAnIntactIsland) {
  PlacementCandidate whole_island{2, 1000, 8, 4000, 1000, true, 1};
  PlacementCandidate broken_one{2, 1000, 8, 4000, 1000, true, 0};
  FragmentationAwareScorer s;
  EXPECT_LT(s.Cost(broken_one), s.Cost(whole_island));
  EXPECT_EQ(BestFitScorer().Cost(broken_one), BestFitScorer().Cost(whole_island));
}

TEST(PlacementScorerTest, TheGleanerScorerAvoidsSliversOfAGpu) {
  // An 800 job on a GPU with 850 free leaves a sliver of 50 that hardly any
  // job fits; with 950 free it leaves 150. Best fit sees no difference (the
  // node's leftover is the same); the gleaner scorer prefers the latter,
  // and prefers either to splitting a whole GPU.
  PlacementCandidate sliver{1, 800, 8, 4950, 850, true, 0};
  PlacementCandidate roomy{1, 800, 8, 4950, 950, true, 0};
  PlacementCandidate whole{1, 800, 8, 4950, 1000, true, 0};
  FragmentationAwareScorer s;
  EXPECT_LT(s.Cost(roomy), s.Cost(sliver));
  EXPECT_LT(s.Cost(sliver), s.Cost(whole));
  EXPECT_EQ(BestFitScorer().Cost(roomy), BestFitScorer().Cost(sliver));
  EXPECT_TRUE(MakePlacementScorer("bestfit"));
  EXPECT_TRUE(MakePlacementScorer("gleaner"));
  EXPECT_FALSE(MakePlacementScorer("random"));
}

}  // namespace
}  // namespace gleaner::sched
