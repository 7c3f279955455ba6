// Every VictimSelector, run through the eviction planner, must keep these
// promises; what distinguishes the selectors is tested below the suite.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/placement.h"
#include "sched/preemption.h"
#include "sched/victim_selector.h"
#include "sched_test_util.h"

namespace gleaner::sched {
namespace {

using ::testing::ElementsAre;
using testing::MakeJob;
using testing::MakeNode;
using ::testing::UnorderedElementsAre;

struct Running {
  VictimCandidate who;
  std::vector<int> gpus;  // indices on node "a"
  int milli = 1000;
};

Running Victim(JobId id, PriorityClass c, std::vector<int> gpus, int running_s, int priority = 0) {
  Running r;
  r.who.job = id;
  r.who.priority_class = c;
  r.who.priority = priority;
  r.who.milli = static_cast<int64_t>(gpus.size()) * 1000;
  r.who.running_for = core::Seconds(running_s);
  r.gpus = std::move(gpus);
  return r;
}

template <typename Selector>
class VictimConformanceTest : public ::testing::Test {
 protected:
  // Node "a" with `gpus` GPUs, every running job placed on it.
  std::optional<NodeEviction> Plan(int gpus, const std::vector<Running>& running,
                                   const JobRequest& job) {
    cluster_ = ClusterState();
    EXPECT_TRUE(cluster_.AddNode(MakeNode("a", gpus)).ok());
    std::vector<EvictableJob> evictable;
    for (const Running& r : running) {
      EvictableJob e{r.who.job, {}, r.milli, selector_.Cost(r.who)};
      for (int i : r.gpus) {
        cluster_.Take(static_cast<GpuIndex>(i), r.milli);
        e.gpus.push_back(static_cast<GpuIndex>(i));
      }
      evictable.push_back(e);
    }
    return PlanEvictionOnNode(cluster_, job, AllowedClasses(cluster_, job), 0, evictable);
  }
  ClusterState cluster_;
  Selector selector_;
};

using Selectors = ::testing::Types<LeastWorkLostSelector, LowestPriorityFirstSelector>;
TYPED_TEST_SUITE(VictimConformanceTest, Selectors);

TYPED_TEST(VictimConformanceTest, OpportunisticWorkGoesBeforeNormalWork) {
  auto plan = this->Plan(2,
                         {Victim(1, PriorityClass::kNormal, {0}, 60),
                          Victim(2, PriorityClass::kOpportunistic, {1}, 86400, 1000)},
                         MakeJob(9, 1));
  ASSERT_TRUE(plan);
  EXPECT_THAT(plan->victims, ElementsAre(2));
}

TYPED_TEST(VictimConformanceTest, TheSetIsEnoughAndMinimal) {
  // 8 GPUs all busy; a 4-GPU job. Whatever the costs, the chosen set frees
  // at least 4 GPUs and none of its members could be spared.
  const std::vector<Running> running = {Victim(1, PriorityClass::kOpportunistic, {0}, 10),
                                        Victim(2, PriorityClass::kNormal, {1, 2, 3, 4}, 5000, 5),
                                        Victim(3, PriorityClass::kNormal, {5, 6, 7}, 100, -5)};
  auto plan = this->Plan(8, running, MakeJob(9, 4));
  ASSERT_TRUE(plan);
  const auto freed = [&](const std::vector<JobId>& ids) {
    size_t n = 0;
    for (const Running& r : running) {
      if (std::find(ids.begin(), ids.end(), r.who.job) != ids.end()) n += r.gpus.size();
    }
    return n;
  };
  EXPECT_GE(freed(plan->victims), 4u);
  for (size_t i = 0; i < plan->victims.size(); ++i) {
    std::vector<JobId> without = plan->victims;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    EXPECT_LT(freed(without), 4u) << "job " << plan->victims[i] << " was not needed";
  }
}

TYPED_TEST(VictimConformanceTest, NothingWhenEvenAllVictimsAreNotEnough) {
  // One GPU busy, one free: no eviction makes room for three.
  EXPECT_FALSE(this->Plan(2, {Victim(1, PriorityClass::kOpportunistic, {0}, 10)}, MakeJob(9, 3)));
}

TYPED_TEST(VictimConformanceTest, AFractionNeedsRoomOnOneGpuOnly) {
  Running a = Victim(1, PriorityClass::kOpportunistic, {0}, 10);
  Running b = Victim(2, PriorityClass::kOpportunistic, {0}, 20);
  a.milli = b.milli = 300;
  a.who.milli = b.who.milli = 300;
  Running whole = Victim(3, PriorityClass::kOpportunistic, {1}, 5);
  auto plan = this->Plan(2, {a, b, whole}, MakeJob(9, 1, 500));
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->victims.size(), 1u);  // 400 free + one 300 share is enough
}

// ---- what distinguishes the selectors ------------------------------------

TEST(LeastWorkLostSelectorTest, CheckpointsAndShortRunsLoseLeast) {
  LeastWorkLostSelector s;
  VictimCandidate long_run{1, PriorityClass::kNormal, 0, 1000, core::Seconds(7200), {}, false};
  VictimCandidate short_run = long_run;
  short_run.running_for = core::Seconds(600);
  VictimCandidate checkpointing = long_run;
  checkpointing.checkpoints = true;
  VictimCandidate saved_recently = long_run;
  saved_recently.since_checkpoint = core::Seconds(300);
  EXPECT_LT(s.Cost(short_run), s.Cost(long_run));
  EXPECT_LT(s.Cost(checkpointing), s.Cost(short_run));
  EXPECT_LT(s.Cost(saved_recently), s.Cost(short_run));
  // More GPUs lose more work.
  VictimCandidate wide = short_run;
  wide.milli = 8000;
  EXPECT_LT(s.Cost(short_run), s.Cost(wide));
  // Equal work: the lower priority first.
  VictimCandidate low = short_run;
  low.priority = -10;
  EXPECT_LT(s.Cost(low), s.Cost(short_run));
}

TEST(LowestPriorityFirstSelectorTest, PriorityBeforeRuntime) {
  LowestPriorityFirstSelector s;
  VictimCandidate low_long{1, PriorityClass::kNormal, -5, 1000, core::Seconds(86400), {}, false};
  VictimCandidate high_short{2, PriorityClass::kNormal, 5, 1000, core::Seconds(60), {}, false};
  EXPECT_LT(s.Cost(low_long), s.Cost(high_short));
  EXPECT_GT(LeastWorkLostSelector().Cost(low_long), LeastWorkLostSelector().Cost(high_short));
  EXPECT_TRUE(MakeVictimSelector("least-work-lost"));
  EXPECT_FALSE(MakeVictimSelector("random"));
}

}  // namespace
}  // namespace gleaner::sched
