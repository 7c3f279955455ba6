// Forecast-aware placement: a job's runtime guess against the GPUs'
// expected quiet (WindowFit), in ChooseGpus, FindPlacement and the
// Scheduler.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/gpu_choice.h"
#include "sched/placement.h"
#include "sched/scheduler.h"
#include "sched/window_fit.h"
#include "sched_test_util.h"

namespace gleaner::sched {
namespace {

using testing::At;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Indices;
using testing::Lines;
using testing::MakeJob;
using testing::MakeNode;

core::Duration Min(int64_t m) { return core::Seconds(m * 60); }

// A PCIe node whose GPUs are expected quiet for `windows` minutes (0: no
// forecast).
NodeSpec NodeWithWindows(const std::string& id, const std::vector<int64_t>& windows) {
  NodeSpec n = MakeNode(id, static_cast<int>(windows.size()));
  for (size_t i = 0; i < windows.size(); ++i) n.gpus[i].quiet_p80 = Min(windows[i]);
  return n;
}

JobRequest Lasting(JobId id, int gpus, int64_t minutes) {
  JobRequest j = MakeJob(id, gpus);
  j.priority_class = PriorityClass::kOpportunistic;
  j.runtime_guess = Min(minutes);
  j.runtime_basis = "declared";
  return j;
}

TEST(WindowFitTest, ACoveringWindowBeatsAnUnknownOneWhichBeatsAShortOne) {
  const core::Duration job = Min(40);
  const WindowFit tight = FitWindows({Min(60)}, job);
  const WindowFit loose = FitWindows({Min(180)}, job);
  const WindowFit unknown = FitWindows({Min(0)}, job);
  const WindowFit longest_short = FitWindows({Min(30)}, job);
  const WindowFit shortest_short = FitWindows({Min(10)}, job);
  EXPECT_LT(tight, loose);  // long windows are kept for long jobs
  EXPECT_LT(loose, unknown);
  EXPECT_LT(unknown, longest_short);
  EXPECT_LT(longest_short, shortest_short);
  // A gang lasts as long as its shortest window; an unknown one among
  // covering ones makes the whole unknown, among short ones still short.
  EXPECT_EQ(FitWindows({Min(180), Min(30)}, job), longest_short);
  EXPECT_EQ(FitWindows({Min(180), Min(0)}, job).miss, 1);
  EXPECT_EQ(FitWindows({Min(0), Min(30)}, job).miss, 2);
  // No runtime guess: every window fits alike.
  EXPECT_EQ(FitWindows({Min(10)}, {}), FitWindows({Min(600)}, {}));
}

TEST(WindowFitTest, WindowsAreRoundedDownToPowersOfTwoMinutes) {
  EXPECT_EQ(RoundQuietWindow({}), core::Duration{});
  EXPECT_EQ(RoundQuietWindow(core::Seconds(59)), core::Duration{});
  EXPECT_EQ(RoundQuietWindow(core::Seconds(90)), Min(1));
  EXPECT_EQ(RoundQuietWindow(Min(5)), Min(4));
  EXPECT_EQ(RoundQuietWindow(Min(8)), Min(8));
  EXPECT_EQ(RoundQuietWindow(Min(180)), Min(128));
}

TEST(WindowPlacementTest, WithinANodeTheTightestCoveringWindowIsTaken) {
  ClusterState c;
  ASSERT_TRUE(c.AddNode(NodeWithWindows("a", {10, 180, 60, 0})).ok());
  const auto pick = [&](int64_t minutes, int count = 1) {
    return Indices(c, ChooseGpus(c, 0, 0, count, nullptr, Min(minutes))->gpus);
  };
  EXPECT_THAT(pick(40), ElementsAre(2));   // 60 covers it with least to spare
  EXPECT_THAT(pick(120), ElementsAre(1));  // only 180 does
  EXPECT_THAT(pick(300), ElementsAre(3));  // none does: unknown before short
  EXPECT_THAT(pick(5), ElementsAre(0));    // a short job takes the short window
  EXPECT_THAT(pick(0), ElementsAre(0));    // no guess: node order, as before
  EXPECT_THAT(pick(40, 2), ElementsAre(1, 2));
}

TEST(WindowPlacementTest, ALongJobGoesToTheNodeWhoseWindowCoversItAndSaysWhy) {
  ClusterState c;
  // Best fit alone prefers node a, the fuller one.
  ASSERT_TRUE(c.AddNode(NodeWithWindows("a", {15, 15})).ok());
  ASSERT_TRUE(c.AddNode(NodeWithWindows("b", {240, 240, 240, 240})).ok());
  c.Take(0, 1000);
  const FragmentationAwareScorer scorer;
  const auto allowed = AllowedClasses(c, Lasting(1, 1, 0));

  auto p = FindPlacement(c, Lasting(1, 1, 120), allowed, scorer, 16);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->node, 1u);
  EXPECT_EQ(p->why, "expected idle >= 4h00m at p80; job expected 2h00m (declared)");

  p = FindPlacement(c, Lasting(2, 1, 10), allowed, scorer, 16);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->node, 0u);  // the short window is the short job's

  p = FindPlacement(c, Lasting(3, 1, 0), allowed, scorer, 16);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->node, 0u);  // nothing known: packing decides
  EXPECT_EQ(p->why, "");

  p = FindPlacement(c, Lasting(4, 4, 600), allowed, scorer, 16);
  ASSERT_TRUE(p);
  EXPECT_THAT(p->why, HasSubstr("no free GPU looked at is expected idle that long"));
}

TEST(WindowPlacementTest, TheSchedulerPlacesByTheWindowsItIsToldUnlessTurnedOff) {
  for (const bool aware : {true, false}) {
    SchedulerConfig config;
    config.window_aware_placement = aware;
    Scheduler s(config);
    ASSERT_TRUE(s.Handle(NodeAdded{NodeWithWindows("a", {0, 0})}, At(0)).ok());
    GpuVerdictsChanged told;
    told.changes.push_back({core::GpuUuid("GPU-a-0"), true, "idle", {}, Min(8)});
    told.changes.push_back({core::GpuUuid("GPU-a-1"), true, "idle", {}, Min(256)});
    ASSERT_TRUE(s.Handle(told, At(1)).ok());
    EXPECT_THAT(Lines(s.Handle(JobSubmitted{Lasting(1, 1, 90)}, At(2))),
                ElementsAre(aware ? "start job 1 on a gpus 1" : "start job 1 on a gpus 0"))
        << "aware " << aware;
  }
}

}  // namespace
}  // namespace gleaner::sched
