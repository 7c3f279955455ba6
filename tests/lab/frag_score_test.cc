// gleaner's placement score (sched/frag_score.h) on clusters small enough to
// work by hand, and the policy that uses it: model pressure first, then
// FGD's score, then the CPU shortage; the cache of scores per shape gives
// the same answers as scoring afresh.
#include "sched/frag_score.h"

#include <gtest/gtest.h>

#include "lab/frag_experiment.h"
#include "lab/frag_policy.h"
#include "sched/frag_cluster.h"

namespace gleaner::sched {
namespace {

FragPod Pod(int num_gpu, int milli, int64_t cpu = 0, uint32_t models = ~0u) {
  FragPod p;
  p.num_gpu = num_gpu;
  p.gpu_milli = milli;
  p.cpu_milli = cpu;
  p.model_mask = models;
  return p;
}

TEST(FragScoreTest, TypicalShapesCanKeepEveryMultiGpuShape) {
  std::vector<FragPod> pods(19, Pod(1, 500));
  pods.push_back(Pod(8, 1000));  // the last 5 %: FGD leaves it out
  EXPECT_EQ(TypicalShapes(pods).size(), 1u);
  const std::vector<TypicalShape> kept = TypicalShapes(pods, 0.95, true);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1].pod.num_gpu, 8);
  EXPECT_DOUBLE_EQ(kept[0].weight, 19.0 / 20);
  EXPECT_DOUBLE_EQ(kept[1].weight, 1.0 / 20);
}

TEST(FragScoreTest, ProfileSplitsPinnedRequestsOverThePresentModels) {
  // Models 0, 1 and 2 have GPUs, model 3 none. 10,000 milli-GPU of
  // requests in all: 2,000 pinned to model 0; 1,000 to "0 or 3" (3 is
  // absent: all on 0); 2,000 to "0 or 1" (1,000 each); 1,000 to "0, 1 or
  // 2", every present model, so not pinned; 4,000 anywhere; a CPU-only pod.
  const std::vector<FragPod> pods = {Pod(2, 1000, 8000, 0b0001), Pod(1, 1000, 4000, 0b1001),
                                     Pod(2, 1000, 8000, 0b0011), Pod(1, 1000, 4000, 0b0111),
                                     Pod(4, 1000, 16000),        Pod(0, 0, 64000)};
  const WorkloadProfile profile = ProfileWorkload(pods, {4, 4, 4, 0});
  ASSERT_EQ(profile.pinned_share.size(), 4u);
  EXPECT_DOUBLE_EQ(profile.pinned_share[0], 0.4);
  EXPECT_DOUBLE_EQ(profile.pinned_share[1], 0.1);
  EXPECT_DOUBLE_EQ(profile.pinned_share[2], 0);
  EXPECT_DOUBLE_EQ(profile.pinned_share[3], 0);
  EXPECT_DOUBLE_EQ(profile.cpu_per_gpu_milli, 4.0);  // the CPU-only pod not counted
}

TEST(FragScoreTest, AModelIsOversubscribedWhenItsPinnedShareReachesItsShareOfTheFree) {
  WorkloadProfile profile;
  profile.pinned_share = {0.4, 0.1, 0};
  // Free: 3,000 / 6,000 / 1,000 of 10,000: shares 0.3, 0.6, 0.1.
  EXPECT_EQ(OversubscribedModels(profile, {3000, 6000, 1000}),
            (std::vector<bool>{true, false, false}));
  EXPECT_EQ(OversubscribedModels(profile, {5000, 4000, 1000}),
            (std::vector<bool>{false, false, false}));
  // Nothing free on a pinned model: oversubscribed, no division by zero.
  EXPECT_EQ(OversubscribedModels(profile, {0, 1000, 0}), (std::vector<bool>{true, false, false}));
}

TEST(FragScoreTest, CpuShortageCountsTheCpuFreeGpusWouldNeed) {
  FragNodeState n;
  n.gpus = 2;
  n.gpu_free = {1000, 500};
  n.cpu_free = 10'000;
  EXPECT_DOUBLE_EQ(CpuShortage(n, 4.0), 0);       // needs 6,000
  EXPECT_DOUBLE_EQ(CpuShortage(n, 10.0), 5'000);  // needs 15,000
}

TEST(FragScoreTest, FgdIntegerScoreIsTheAuthorsTruncatedSigmoid) {
  EXPECT_EQ(FgdIntegerScore(0), 50);
  EXPECT_EQ(FgdIntegerScore(200), 54);   // trunc(100 sigmoid(0.2))
  EXPECT_EQ(FgdIntegerScore(-250), 43);  // trunc(100 sigmoid(-0.25))
}

// Two 2-GPU nodes: B (model 0, V100) has half a GPU taken, A (model 1, T4)
// is empty. Three in four GPU requests are pinned to V100, which holds
// 1,500 of the 3,500 milli free: oversubscribed. FGD alone would fill B's
// shared GPU (drop +500, score 62, against A's +250, 56); gleaner sends a
// pod that may run anywhere to A, whatever the tie order.
TEST(FragScoreTest, AnUnpinnedPodKeepsOffAModelPinnedPodsOversubscribe) {
  auto c = FragCluster::Build({{"b", 64'000, 1 << 20, 2, "V100"}, {"a", 64'000, 1 << 20, 2, "T4"}});
  ASSERT_TRUE(c.ok());
  c->Apply(Pod(1, 500), {0, 0b01});
  const uint32_t v100 = 1u << 0;  // model ids follow first appearance
  const std::vector<FragPod> workload = {Pod(1, 1000, 0, v100), Pod(1, 1000, 0, v100),
                                         Pod(1, 1000, 0, v100), Pod(1, 1000)};
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    auto fgd = lab::MakeFragPolicy("fgd", *c, workload, seed);
    auto gleaner = lab::MakeFragPolicy("gleaner", *c, workload, seed);
    ASSERT_TRUE(fgd.ok() && gleaner.ok());
    const auto by_fgd = (*fgd)->Place(Pod(1, 500), *c);
    const auto by_gleaner = (*gleaner)->Place(Pod(1, 500), *c);
    ASSERT_TRUE(by_fgd.has_value() && by_gleaner.has_value());
    EXPECT_EQ(by_fgd->node, 0u) << "seed " << seed;
    EXPECT_EQ(by_gleaner->node, 1u) << "seed " << seed;
    // A pod pinned to V100 still goes there: its only model.
    const auto pinned = (*gleaner)->Place(Pod(1, 500, 0, v100), *c);
    ASSERT_TRUE(pinned.has_value());
    EXPECT_EQ(pinned->node, 0u);
  }
}

// Two 1-GPU nodes of one model; the workload's GPU pods ask 8 CPUs a GPU.
// A has 8 CPUs free, B 40. Half a GPU with 8 CPUs scores alike on both for
// FGD (its shape no longer fits either: drop -500), but on A it leaves
// 500 milli-GPU with no CPU (a shortage of 4,000 milli-CPU), on B none.
TEST(FragScoreTest, AGpuPodGoesWhereItLeavesTheLeastGpuShortOfCpu) {
  auto c = FragCluster::Build({{"a", 8'000, 1 << 20, 1, "T4"}, {"b", 40'000, 1 << 20, 1, "T4"}});
  ASSERT_TRUE(c.ok());
  const std::vector<FragPod> workload = {Pod(1, 1000, 8000)};
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    auto gleaner = lab::MakeFragPolicy("gleaner", *c, workload, seed);
    ASSERT_TRUE(gleaner.ok());
    const auto placed = (*gleaner)->Place(Pod(1, 500, 8000), *c);
    ASSERT_TRUE(placed.has_value());
    EXPECT_EQ(placed->node, 1u) << "seed " << seed;
  }
}

std::vector<FragPodSpec> Mixed() {
  std::vector<FragPodSpec> pods;
  for (int i = 0; i < 400; ++i) {
    FragPodSpec p;
    p.name = "p" + std::to_string(i);
    p.cpu_milli = 1000 * (1 + i % 7);
    p.memory_mib = 1024;
    p.num_gpu = i % 13 == 0 ? 4 : (i % 5 == 0 ? 0 : 1);
    p.gpu_milli = p.num_gpu == 0 ? 0 : (p.num_gpu == 1 && i % 2 ? 100 * (1 + i % 9) : 1000);
    if (i % 4 == 0 && p.num_gpu > 0) p.gpu_models = {"T4"};
    pods.push_back(p);
  }
  return pods;
}

std::vector<FragNodeSpec> Nodes() {
  std::vector<FragNodeSpec> nodes;
  for (int i = 0; i < 40; ++i) {
    nodes.push_back({"n" + std::to_string(i), 16'000 * (1 + i % 4), 1 << 20, i % 3 == 0 ? 8 : 2,
                     i % 2 ? "T4" : "V100M32"});
  }
  return nodes;
}

// The kept scores must be exactly what scoring afresh gives: a policy made
// anew for every pod has an empty cache, and must place each pod alike.
TEST(FragScoreTest, KeptScoresGiveTheSameAnswersAsScoringAfresh) {
  for (const char* name : {"bestfit", "fgd", "gleaner"}) {
    auto built = FragCluster::Build(Nodes());
    ASSERT_TRUE(built.ok());
    FragCluster kept_cluster = *built;
    FragCluster fresh_cluster = *built;
    std::vector<FragPod> workload;
    for (const FragPodSpec& p : Mixed()) workload.push_back(kept_cluster.Resolve(p));
    auto kept = lab::MakeFragPolicy(name, kept_cluster, workload, 5);
    ASSERT_TRUE(kept.ok());
    int placed = 0;
    for (const FragPod& pod : workload) {
      auto fresh = lab::MakeFragPolicy(name, fresh_cluster, workload, 5);
      ASSERT_TRUE(fresh.ok());
      const auto a = (*kept)->Place(pod, kept_cluster);
      const auto b = (*fresh)->Place(pod, fresh_cluster);
      ASSERT_EQ(a.has_value(), b.has_value()) << name;
      if (!a) continue;
      ASSERT_EQ(a->node, b->node) << name << " pod " << placed;
      ASSERT_EQ(a->gpu_mask, b->gpu_mask) << name;
      kept_cluster.Apply(pod, *a);
      fresh_cluster.Apply(pod, *b);
      ++placed;
    }
    EXPECT_GT(placed, 100) << name;
  }
}

}  // namespace
}  // namespace gleaner::sched
