// Cost-aware choice between GPU models: the scheduler's preference for the
// cheapest useful GPU-hour, and when it stands aside.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/scheduler.h"
#include "sched_test_util.h"

namespace gleaner::sched {
namespace {

using testing::At;
using ::testing::HasSubstr;
using testing::MakeJob;
using testing::MakeNode;

constexpr const char* kT4 = "Tesla T4";
constexpr const char* kH100 = "NVIDIA H100 80GB HBM3";

// H100: 4.00 an hour at 3.2 A100s of work (1.25 per useful hour); T4:
// 0.50 at 0.2 (2.50). Anything else is unpriced.
std::optional<ModelPrice> Prices(const std::string& name, core::Bytes) {
  if (name == kH100) return ModelPrice{"H100-80GB", 4.0, 3.2};
  if (name == kT4) return ModelPrice{"T4", 0.5, 0.2};
  return std::nullopt;
}

struct Started {
  std::string node;
  std::string why;
};

// Submits one job to a scheduler with an H100 node of 8 and a T4 node of
// 2, one of whose GPUs is taken, so that fit alone (best fit: the fullest
// node first) would pick the T4 node. (The gleaner scorer, having learned
// that half the jobs are pinned to T4, would keep off it for its own
// reasons: PlacementScorerTest.TheLearnedGleanerScorerKeepsOffAClassPinned
// JobsOversubscribe.)
std::optional<Started> PlaceOne(SchedulerConfig config, JobRequest job,
                                const std::string& t4_model = kT4) {
  SchedulerPolicies policies;
  policies.scorer = std::make_unique<BestFitScorer>();
  Scheduler s(std::move(config), std::move(policies));
  EXPECT_TRUE(s.Handle(NodeAdded{MakeNode("h100", 8, {}, kH100, 80)}, At(0)).ok());
  EXPECT_TRUE(s.Handle(NodeAdded{MakeNode("t4", 2, {}, t4_model, 16)}, At(0)).ok());
  JobRequest filler = MakeJob(99, 1);
  filler.gpu_models = {"T4"};
  EXPECT_TRUE(s.Handle(JobSubmitted{filler}, At(0)).ok());
  auto actions = s.Handle(JobSubmitted{job}, At(1));
  EXPECT_TRUE(actions.ok());
  for (const Action& a : *actions) {
    if (const auto* start = std::get_if<StartJob>(&a); start && start->job == job.id) {
      return Started{start->node.str(), start->why};
    }
  }
  return std::nullopt;
}

SchedulerConfig Priced() {
  SchedulerConfig c;
  c.model_price = Prices;
  return c;
}

TEST(ModelCostTest, AJobThatMayUseEitherModelTakesTheCheaperUsefulGpuHour) {
  const auto started = PlaceOne(Priced(), MakeJob(1, 1));
  ASSERT_TRUE(started);
  EXPECT_EQ(started->node, "h100");
  EXPECT_THAT(started->why, HasSubstr("H100-80GB at 1.25 USD per A100-hour of work"));
  EXPECT_THAT(started->why, HasSubstr("4.00 per GPU-hour, speed 3.20"));
  EXPECT_THAT(started->why, HasSubstr("T4 2.50"));
}

TEST(ModelCostTest, FitDecidesWhenTheFlagIsOff) {
  SchedulerConfig c = Priced();
  c.cost_aware = false;
  const auto started = PlaceOne(c, MakeJob(1, 1));
  ASSERT_TRUE(started);
  EXPECT_EQ(started->node, "t4");
  EXPECT_EQ(started->why, "");
}

TEST(ModelCostTest, FitDecidesWhenAModelTheJobMayUseHasNoPrice) {
  const auto started = PlaceOne(Priced(), MakeJob(1, 1), "Tesla T4 (unpriced)");
  ASSERT_TRUE(started);
  EXPECT_EQ(started->node, "t4");
  EXPECT_EQ(started->why, "");
}

TEST(ModelCostTest, AZeroSpeedCountsAsNoPrice) {
  SchedulerConfig c;
  c.model_price = [](const std::string& name, core::Bytes m) -> std::optional<ModelPrice> {
    auto p = Prices(name, m);
    if (p && name == kT4) p->speed = 0;
    return p;
  };
  const auto started = PlaceOne(c, MakeJob(1, 1));
  ASSERT_TRUE(started);
  EXPECT_EQ(started->node, "t4");
}

TEST(ModelCostTest, AJobOfOneModelIsToldNothingAboutPrices) {
  JobRequest job = MakeJob(1, 1);
  job.gpu_models = {"T4"};
  const auto started = PlaceOne(Priced(), job);
  ASSERT_TRUE(started);
  EXPECT_EQ(started->node, "t4");
  EXPECT_EQ(started->why, "");
}

TEST(ModelCostTest, WhenTheCheaperModelIsFullTheNextOneIsTakenAndTheReasonSaysSo) {
  // An H100-only job takes the whole H100 node first.
  Scheduler s(Priced());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("h100", 8, {}, kH100, 80)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("t4", 2, {}, kT4, 16)}, At(0)).ok());
  JobRequest big = MakeJob(1, 8);
  big.gpu_models = {"H100"};
  ASSERT_TRUE(s.Handle(JobSubmitted{big}, At(0)).ok());
  auto actions = s.Handle(JobSubmitted{MakeJob(2, 1)}, At(1));
  ASSERT_TRUE(actions.ok());
  ASSERT_EQ(actions->size(), 1u);
  const auto& start = std::get<StartJob>(actions->front());
  EXPECT_EQ(start.node.str(), "t4");
  EXPECT_THAT(start.why, HasSubstr("T4 at 2.50 USD"));
  EXPECT_THAT(start.why, HasSubstr("H100-80GB 1.25 (no room)"));
}

TEST(ModelCostTest, TiersGroupEqualPricesAndNeedEveryClassPriced) {
  ClusterState cluster;
  ASSERT_TRUE(cluster.AddNode(MakeNode("a", 1, {}, kH100, 80)).ok());
  ASSERT_TRUE(cluster.AddNode(MakeNode("b", 1, {}, kT4, 16)).ok());
  ASSERT_TRUE(cluster.AddNode(MakeNode("c", 1, {}, "other", 16)).ok());
  int asked = 0;
  ModelCosts costs([&](const std::string& name, core::Bytes m) {
    ++asked;
    return Prices(name, m);
  });
  ASSERT_EQ(cluster.class_count(), 3u);
  const auto tiers = costs.Tiers(cluster, {0, 1});
  ASSERT_EQ(tiers.size(), 2u);
  EXPECT_EQ(tiers[0], std::vector<ClassId>{0});
  EXPECT_EQ(tiers[1], std::vector<ClassId>{1});
  EXPECT_TRUE(costs.Tiers(cluster, {0, 1, 2}).empty());
  EXPECT_TRUE(costs.Tiers(cluster, {1}).empty());
  costs.Tiers(cluster, {0, 1, 2});
  EXPECT_EQ(asked, 3);  // once per class
}

}  // namespace
}  // namespace gleaner::sched
