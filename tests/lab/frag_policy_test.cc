// The fragmentation experiment's pieces on clusters small enough to work by
// hand: the FGD fragmentation measure, the policies' choices, the arrival
// order and the curve.
#include "lab/frag_policy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "lab/frag_experiment.h"
#include "sched/frag_cluster.h"
#include "sched/frag_measure.h"

namespace gleaner::sched {
namespace {

FragPod Pod(int num_gpu, int milli, int64_t cpu = 0) {
  FragPod p;
  p.num_gpu = num_gpu;
  p.gpu_milli = milli;
  p.cpu_milli = cpu;
  return p;
}

FragNodeState Node(std::vector<int> gpu_free, int64_t cpu_free = 64'000) {
  FragNodeState n;
  n.cpu_free = n.cpu_capacity = cpu_free;
  n.memory_free = 1 << 20;
  n.gpus = static_cast<int>(gpu_free.size());
  for (size_t i = 0; i < gpu_free.size(); ++i) n.gpu_free[i] = gpu_free[i];
  return n;
}

TEST(FragClusterTest, FitsChecksCpuMemoryModelAndGpus) {
  FragNodeState n = Node({1000, 300}, 8000);
  EXPECT_TRUE(n.Fits(Pod(1, 300, 8000)));
  EXPECT_FALSE(n.Fits(Pod(1, 300, 8001)));  // CPU
  EXPECT_FALSE(n.Fits(Pod(2, 1000)));       // only one whole GPU
  EXPECT_TRUE(n.Fits(Pod(0, 0, 100)));      // no GPU needed
  FragPod wrong_model = Pod(1, 100);
  wrong_model.model_mask = 0b10;  // model 1 only; this node is model 0
  EXPECT_FALSE(n.Fits(wrong_model));
  FragPod big_memory = Pod(1, 100);
  big_memory.memory_mib = (1 << 20) + 1;
  EXPECT_FALSE(n.Fits(big_memory));
}

TEST(FragClusterTest, TightestGpusPacksFractionsAndTakesLowWholeGpus) {
  const FragNodeState n = Node({1000, 600, 1000, 550});
  EXPECT_EQ(TightestGpus(n, Pod(1, 500)), 0b1000);  // 550 is the tightest fit
  EXPECT_EQ(TightestGpus(n, Pod(1, 580)), 0b0010);  // 600
  EXPECT_EQ(TightestGpus(n, Pod(2, 1000)), 0b0101);
}

TEST(FragMeasureTest, NodeFragmentationByHand) {
  // Shapes: half the pods want 0.5 GPU, a quarter 2 whole GPUs, a quarter no GPU.
  const std::vector<TypicalShape> shapes = {
      {Pod(1, 500), 0.5}, {Pod(2, 1000), 0.25}, {Pod(0, 0, 1000), 0.25}};
  // Free: GPU 0 whole, GPU 1 300 milli (1,300 in all).
  //   0.5 GPU pods fit; they cannot use the 300 left on GPU 1: 0.5 x 300 = 150
  //   2-GPU pods do not fit at all: 0.25 x 1300 = 325
  //   CPU-only pods use no GPU: 0.25 x 1300 = 325
  EXPECT_DOUBLE_EQ(NodeFragmentation(Node({1000, 300}), shapes), 800);
  // Without CPU for the shapes that need it, nothing is usable.
  const std::vector<TypicalShape> hungry = {{Pod(1, 500, 70'000), 1.0}};
  EXPECT_DOUBLE_EQ(NodeFragmentation(Node({1000, 300}), hungry), 1300);
  EXPECT_DOUBLE_EQ(NodeFragmentation(Node({0, 0}), shapes), 0);
}

TEST(FragMeasureTest, MeterMatchesDirectComputationWhateverTheGpuOrder) {
  const std::vector<TypicalShape> shapes = {{Pod(1, 500), 0.6}, {Pod(2, 1000, 4000), 0.4}};
  const FragmentationMeter meter(shapes);
  for (const auto& gpus : std::vector<std::vector<int>>{
           {1000, 300, 0, 1000}, {300, 1000, 1000, 0}, {500, 500}, {1000, 1000, 1000, 1000}}) {
    for (int64_t cpu : {0, 3999, 4000, 100'000}) {
      const FragNodeState n = Node(gpus, cpu);
      EXPECT_DOUBLE_EQ(meter.Of(n), NodeFragmentation(n, shapes));
    }
  }
}

TEST(FragMeasureTest, TypicalShapesCoverNinetyFivePercentMostCommonFirst) {
  std::vector<FragPod> pods;
  for (int i = 0; i < 10; ++i) pods.push_back(Pod(1, 500));
  for (int i = 0; i < 9; ++i) pods.push_back(Pod(1, 1000));
  pods.push_back(Pod(8, 1000));  // the last 5 %: left out
  const std::vector<TypicalShape> shapes = TypicalShapes(pods);
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0].pod.gpu_milli, 500);
  EXPECT_DOUBLE_EQ(shapes[0].weight, 10.0 / 19);
  EXPECT_EQ(shapes[1].pod.gpu_milli, 1000);
  EXPECT_DOUBLE_EQ(shapes[1].weight, 9.0 / 19);
}

TEST(FragPolicyTest, BestFitScoreByHand) {
  // 1 - [0.5 (64,000 - 16,000)/128,000 + 0.5 (2,000 - 1,000)/8,000] = 1 - 0.1875 - 0.0625
  EXPECT_DOUBLE_EQ(lab::BestFitScore(Node({1000, 1000}, 64'000), Pod(1, 1000, 16'000)), 0.75);
}

// Two one-GPU nodes: X has 600 milli free and all its CPU, Y a whole GPU
// and almost no CPU. Half the workload wants 0.5 GPU, half a whole GPU.
//   FGD, X: before, whole-GPU pods cannot use the 600: 0.5 x 600 = 300;
//           after (100 left) neither shape can: 100. Drop +200.
//        Y: before 0; after (500 left) whole-GPU pods cannot use it:
//           0.5 x 500 = 250. Drop -250.     -> X
//   BestFit, X: 1 - [0.5 x 128,000/128,000 + 0.5 x 100/8,000] = 0.49375
//            Y: 1 - [0.5 x 1,000/128,000 + 0.5 x 500/8,000]   = 0.96484 -> Y
class TwoNodeChoice : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = FragCluster::Build({{"x", 128'000, 1 << 20, 1, "T4"}, {"y", 1'000, 1 << 20, 1, "T4"}});
    ASSERT_TRUE(c.ok());
    cluster_ = std::move(c).value();
    workload_ = {Pod(1, 500), Pod(1, 1000)};
    // X has a 400-milli pod already.
    cluster_.Apply(Pod(1, 400), {0, 0b1});
  }
  FragPlacement PlaceWith(const char* policy) {
    auto p = lab::MakeFragPolicy(policy, cluster_, workload_, 7);
    EXPECT_TRUE(p.ok());
    auto placed = (*p)->Place(Pod(1, 500), cluster_);
    EXPECT_TRUE(placed.has_value());
    return placed.value_or(FragPlacement{99, 0});
  }
  FragCluster cluster_ = FragCluster::Build({}).value();
  std::vector<FragPod> workload_;
};

TEST_F(TwoNodeChoice, FgdKeepsTheWholeGpuWhole) {
  const std::vector<TypicalShape> shapes = TypicalShapes(workload_);
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_DOUBLE_EQ(NodeFragmentation(cluster_.node(0), shapes), 300);
  EXPECT_DOUBLE_EQ(NodeFragmentation(cluster_.node(1), shapes), 0);
  EXPECT_EQ(std::trunc(lab::Sigmoid(0.2) * 100), 54);    // X's integer score
  EXPECT_EQ(std::trunc(lab::Sigmoid(-0.25) * 100), 43);  // Y's
  EXPECT_EQ(PlaceWith("fgd").node, 0u);
  EXPECT_EQ(PlaceWith("gleaner").node, 0u);
}

TEST_F(TwoNodeChoice, BestFitPacksTheNodeShortOfCpu) {
  EXPECT_NEAR(lab::BestFitScore(cluster_.node(0), Pod(1, 500)), 0.49375, 1e-12);
  EXPECT_NEAR(lab::BestFitScore(cluster_.node(1), Pod(1, 500)),
              1 - (0.5 * 1000 / 128000 + 0.5 * 500 / 8000.0), 1e-12);
  EXPECT_EQ(PlaceWith("bestfit").node, 1u);
}

TEST(FragPolicyTest, FgdPicksTheGpuThatStrandsLeast) {
  // One node, GPUs with 1,000 and 600 free; shapes: 0.5 GPU and 1 GPU, half each.
  //   before: whole-GPU pods cannot use the 600: 300
  //   on GPU 0 ([500, 600]): whole-GPU pods can use nothing: 0.5 x 1,100 = 550 (drop -250)
  //   on GPU 1 ([1000, 100]): both shapes strand the 100: 100 (drop +200) -> GPU 1
  auto c = FragCluster::Build({{"n", 64'000, 1 << 20, 2, "T4"}});
  ASSERT_TRUE(c.ok());
  c->Apply(Pod(1, 400), {0, 0b10});
  auto fgd = lab::MakeFragPolicy("fgd", *c, {Pod(1, 500), Pod(1, 1000)}, 1);
  ASSERT_TRUE(fgd.ok());
  const auto placed = (*fgd)->Place(Pod(1, 500), *c);
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(placed->gpu_mask, 0b10);
}

TEST(FragPolicyTest, EveryPolicyFailsWhenNothingFitsAndKnowsItsName) {
  auto c = FragCluster::Build({{"n", 1'000, 1024, 1, "T4"}});
  ASSERT_TRUE(c.ok());
  for (const char* name : {"random", "bestfit", "fgd", "gleaner"}) {
    auto p = lab::MakeFragPolicy(name, *c, {Pod(1, 500)}, 3);
    ASSERT_TRUE(p.ok()) << name;
    EXPECT_EQ((*p)->Name(), name);
    EXPECT_FALSE((*p)->Place(Pod(2, 1000), *c).has_value()) << name;
    EXPECT_FALSE((*p)->Place(Pod(1, 500, 2'000), *c).has_value()) << name;  // CPU
    EXPECT_TRUE((*p)->Place(Pod(1, 500, 1'000), *c).has_value()) << name;
  }
  auto unknown = lab::MakeFragPolicy("worstfit", *c, {}, 3);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("random, bestfit, fgd, gleaner"), std::string::npos);
}

std::vector<FragPodSpec> Workload() {
  std::vector<FragPodSpec> pods;
  for (int i = 0; i < 30; ++i) {
    FragPodSpec p;
    p.name = "p" + std::to_string(i);
    p.cpu_milli = 2000;
    p.memory_mib = 1024;
    p.num_gpu = i % 10 == 0 ? 4 : (i % 3 == 0 ? 0 : 1);
    p.gpu_milli = p.num_gpu == 0 ? 0 : (p.num_gpu == 1 && i % 2 ? 300 + 10 * i : 1000);
    pods.push_back(p);
  }
  return pods;
}

TEST(FragExperimentTest, ArrivalOrderIsAPermutationThenClonesUpToTheTarget) {
  const std::vector<FragPodSpec> pods = Workload();
  int64_t originals = 0;
  for (const auto& p : pods) originals += p.total_gpu_milli();
  const int64_t capacity = originals;  // tune 1.3: clones add about 30 %
  const std::vector<size_t> order = lab::ArrivalOrder(pods, capacity, 1.3, 42);
  ASSERT_GT(order.size(), pods.size());
  std::vector<size_t> first(order.begin(), order.begin() + static_cast<long>(pods.size()));
  std::sort(first.begin(), first.end());
  for (size_t i = 0; i < pods.size(); ++i) EXPECT_EQ(first[i], i);
  int64_t requested = 0;
  for (size_t i : order) requested += pods[i].total_gpu_milli();
  EXPECT_LE(requested, static_cast<int64_t>(1.3 * static_cast<double>(capacity)));
  EXPECT_EQ(order, lab::ArrivalOrder(pods, capacity, 1.3, 42));  // deterministic
  EXPECT_NE(order, lab::ArrivalOrder(pods, capacity, 1.3, 43));
  // Originals beyond the target are cut.
  EXPECT_LT(lab::ArrivalOrder(pods, capacity, 0.5, 42).size(), pods.size());
}

TEST(FragExperimentTest, CurveHasEveryPercentAndNeverAllocatesMoreThanArrived) {
  const std::vector<FragNodeSpec> nodes = {{"a", 16'000, 65'536, 4, "T4"},
                                           {"b", 16'000, 65'536, 4, "T4"},
                                           {"c", 8'000, 32'768, 2, "P100"}};
  for (const char* policy : {"random", "bestfit", "fgd", "gleaner"}) {
    auto curve = lab::RunFragExperiment(nodes, Workload(), {policy, 1.3, 42});
    ASSERT_TRUE(curve.ok()) << curve.status().ToString();
    ASSERT_EQ(curve->allocation_pct.size(), 131u) << policy;
    for (size_t x = 0; x < curve->allocation_pct.size(); ++x) {
      // Allocated never exceeds arrived (x rounds it: +0.5); a percent no pod
      // landed on takes its neighbours' mean (+1).
      EXPECT_LE(curve->allocation_pct[x], static_cast<double>(x) + 1.5) << policy << " at " << x;
      if (x > 0) {
        EXPECT_GE(curve->allocation_pct[x], curve->allocation_pct[x - 1]) << policy;
      }
    }
    EXPECT_GT(curve->pods_failed, 0) << policy;  // 130 % cannot all fit
    EXPECT_LE(curve->gpu_allocated_milli, curve->gpu_capacity_milli);
  }
}

TEST(FragExperimentTest, RejectsWhatCannotRun) {
  EXPECT_FALSE(lab::RunFragExperiment({{"a", 1, 1, 1, "T4"}}, Workload(), {"fgd", 0, 1}).ok());
  EXPECT_FALSE(lab::RunFragExperiment({{"a", 1, 1, 0, ""}}, Workload(), {"fgd", 1.3, 1}).ok());
  EXPECT_FALSE(lab::RunFragExperiment({{"a", 1, 1, 9, "T4"}}, Workload(), {"fgd", 1.3, 1}).ok());
}

}  // namespace
}  // namespace gleaner::sched
