// Reservations: GPUs held for a project, lent to other projects'
// preemptible jobs while idle and taken back when the owner's work comes.
#include "sched/reservation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/scheduler.h"
#include "sched_test_util.h"

namespace gleaner::sched {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeNode;

using testing::At;
using testing::kT0;
using testing::Lines;

JobRequest Job(JobId id, int gpus, const std::string& project, bool preemptible = true) {
  JobRequest j = testing::MakeJob(id, gpus);
  j.project = project;
  j.preemptible = preemptible;
  return j;
}

Reservation Standing(const std::string& name, const std::string& project, int gpus) {
  Reservation r;
  r.name = name;
  r.project = project;
  r.gpus = gpus;
  return r;
}

std::vector<std::string> Uuids(const core::Result<std::vector<core::GpuUuid>>& r) {
  if (!r.ok()) return {"error: " + r.status().ToString()};
  std::vector<std::string> out;
  for (const core::GpuUuid& g : *r) out.push_back(g.str());
  return out;
}

TEST(ReservationTest, IdleReservedGpusAreLentAndTakenBackForTheOwner) {
  SchedulerConfig config;  // min_runtime 600 s: the reclaim ignores it
  config.reservations.push_back(Standing("vis", "vision", 2));
  Scheduler s(config);
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 4)}, At(0)).ok());
  EXPECT_THAT(Uuids(s.ReservedGpus("vis")), ElementsAre("GPU-a-0", "GPU-a-1"));
  // A borrower takes unreserved GPUs first, reserved ones only when no
  // other is free.
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Job(1, 2, "ml")}, At(0))),
              ElementsAre("start job 1 on a gpus 2,3"));
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Job(2, 2, "ml")}, At(0))),
              ElementsAre("start job 2 on a gpus 0,1"));
  // The owner's job arrives ten seconds later: the borrower leaves.
  const std::string why =
      "for job 3 (normal, needs 2 GPUs): reservation vis takes back GPUs reserved for project "
      "vision; project ml borrowed them while they were idle";
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Job(3, 2, "vision")}, At(10))),
              ElementsAre("preempt job 2: " + why));
  EXPECT_EQ(*s.PendingReason(3),
            "waiting for 1 borrower to leave the GPUs reserved for project vision (reservation "
            "vis)");
  EXPECT_THAT(Lines(s.Handle(JobFailed{2, "signalled"}, At(20))),
              ElementsAre("requeue job 2: " + why, "start job 3 on a gpus 0,1"));
  EXPECT_EQ(*s.PendingReason(2), "needs 2 GPUs on one node; no such GPU is free");
}

TEST(ReservationTest, NonPreemptibleJobsOfOtherProjectsNeverGetReservedGpus) {
  SchedulerConfig config;
  config.reservations.push_back(Standing("vis", "vision", 2));
  Scheduler s(config);
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 4)}, At(0)).ok());
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Job(1, 4, "ml", false)}, At(0))).empty());
  EXPECT_EQ(*s.PendingReason(1),
            "needs 4 GPUs on one node; the free GPUs that would fit it are reserved for project "
            "vision (reservation vis), lent only to preemptible jobs of other projects");
  // Two unreserved GPUs fit a 2-GPU job whatever it is.
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Job(3, 2, "ml", false)}, At(0))),
              ElementsAre("start job 3 on a gpus 2,3"));
  // Critical work of another project does not get them either.
  JobRequest critical = Job(2, 2, "ml", false);
  critical.priority_class = PriorityClass::kCritical;
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{critical}, At(0))).empty());
  EXPECT_THAT(*s.PendingReason(2), HasSubstr("reserved for project vision (reservation vis)"));
  // The owner's own non-preemptible job takes its reserved GPUs.
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Job(4, 2, "vision", false)}, At(0))),
              ElementsAre("start job 4 on a gpus 0,1"));
  // Once it ends, the critical job still may not use them; when the
  // reservation ends, it may.
  EXPECT_TRUE(Lines(s.Handle(JobFinished{4}, At(5))).empty());
  EXPECT_THAT(*s.PendingReason(2), HasSubstr("reserved for project vision (reservation vis)"));
  EXPECT_THAT(Lines(s.Handle(ReservationEnded{"vis"}, At(6))),
              ElementsAre("start job 2 on a gpus 0,1"));
}

TEST(ReservationTest, TheOwnerUsesItsReservedGpusFirst) {
  SchedulerConfig config;
  config.reservations.push_back(Standing("vis", "vision", 2));
  Scheduler s(config);
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 4)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("b", 2)}, At(0)).ok());
  EXPECT_THAT(Uuids(s.ReservedGpus("vis")), ElementsAre("GPU-a-0", "GPU-a-1"));
  // Best fit alone would put one GPU on b, the fuller node; the owner's
  // job goes to its reservation instead.
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Job(1, 1, "vision")}, At(0))),
              ElementsAre("start job 1 on a gpus 0"));
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Job(2, 1, "ml")}, At(0))),
              ElementsAre("start job 2 on b gpus 0"));
}

TEST(ReservationTest, AWindowOpensAndClosesOnTicks) {
  SchedulerConfig config;
  Reservation r = Standing("night", "vision", 2);
  r.starts_at = At(100);
  r.ends_at = At(200);
  config.reservations.push_back(r);
  Scheduler s(config);
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 2)}, At(0)).ok());
  EXPECT_THAT(Uuids(s.ReservedGpus("night")), ElementsAre());  // not yet
  // Before the window anyone may take the GPUs.
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Job(1, 1, "ml", false)}, At(0))),
              ElementsAre("start job 1 on a gpus 0"));
  // At the window, a GPU held by a job the owner could not take back is
  // not pinned: the reservation holds what it can, and tops up later.
  EXPECT_TRUE(Lines(s.Handle(Tick{}, At(100))).empty());
  EXPECT_THAT(Uuids(s.ReservedGpus("night")), ElementsAre("GPU-a-1"));
  ASSERT_TRUE(s.Handle(JobFinished{1}, At(150)).ok());
  EXPECT_TRUE(Lines(s.Handle(Tick{}, At(160))).empty());
  EXPECT_THAT(Uuids(s.ReservedGpus("night")), ElementsAre("GPU-a-0", "GPU-a-1"));
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Job(2, 1, "ml", false)}, At(170))).empty());
  EXPECT_THAT(*s.PendingReason(2), HasSubstr("reserved for project vision (reservation night)"));
  // A Tick at the end closes the window: job 2 starts in the same pass.
  EXPECT_THAT(Lines(s.Handle(Tick{}, At(200))), ElementsAre("start job 2 on a gpus 0"));
  EXPECT_EQ(s.ReservedGpus("night").status().code(), core::StatusCode::kNotFound);
}

TEST(ReservationTest, StartedByAnEventAndRepinnedWhenItsNodeIsLost) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 2)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("b", 2)}, At(0)).ok());
  // A borrower runs on a; the reservation starts and takes its GPUs back
  // for the owner's pending job at once.
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Job(1, 2, "ml")}, At(0))),
              ElementsAre("start job 1 on a gpus 0,1"));
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Job(2, 2, "ml", false)}, At(0))),
              ElementsAre("start job 2 on b gpus 0,1"));
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Job(3, 2, "vision")}, At(1))).empty());
  Reservation a100 = Standing("vis", "vision", 2);
  a100.gpu_model = "A100";
  EXPECT_THAT(Lines(s.Handle(ReservationStarted{a100}, At(2))),
              ElementsAre(HasSubstr("preempt job 1: for job 3 (normal, needs 2 GPUs): "
                                    "reservation vis takes back")));
  // b's GPUs are held by a non-preemptible job of another project: a's
  // were chosen. When a is lost, b's GPUs are pinned once they are free.
  EXPECT_THAT(Uuids(s.ReservedGpus("vis")), ElementsAre("GPU-a-0", "GPU-a-1"));
  EXPECT_THAT(Lines(s.Handle(NodeLost{core::NodeId("a"), "agent gone"}, At(3))),
              ElementsAre("requeue job 1: node a lost: agent gone"));
  EXPECT_THAT(Uuids(s.ReservedGpus("vis")), ElementsAre());
  EXPECT_THAT(Lines(s.Handle(JobFinished{2}, At(4))), ElementsAre("start job 3 on b gpus 0,1"));
  EXPECT_TRUE(Lines(s.Handle(Tick{}, At(5))).empty());
  EXPECT_THAT(Uuids(s.ReservedGpus("vis")), ElementsAre("GPU-b-0", "GPU-b-1"));
}

TEST(ReservationTest, MistakesSayWhatToChange) {
  Scheduler s;
  Reservation none = Standing("x", "vision", 0);
  EXPECT_THAT(s.Handle(ReservationStarted{none}, At(0)).status().message(),
              HasSubstr("reservation x: gpus: at least 1; got 0"));
  EXPECT_THAT(s.Handle(ReservationStarted{Standing("x", "", 1)}, At(0)).status().message(),
              HasSubstr("name the project"));
  ASSERT_TRUE(s.Handle(ReservationStarted{Standing("x", "vision", 1)}, At(0)).ok());
  EXPECT_THAT(s.Handle(ReservationStarted{Standing("x", "ml", 1)}, At(0)).status().message(),
              HasSubstr("exists already; end it first or choose another name"));
  Reservation past = Standing("old", "vision", 1);
  past.ends_at = At(5);
  EXPECT_EQ(s.Handle(ReservationStarted{past}, At(10)).status().code(),
            core::StatusCode::kFailedPrecondition);
  Reservation backwards = Standing("b", "vision", 1);
  backwards.starts_at = At(50);
  backwards.ends_at = At(40);
  EXPECT_THAT(s.Handle(ReservationStarted{backwards}, At(10)).status().message(),
              HasSubstr("ends at or before it starts"));
  EXPECT_EQ(s.Handle(ReservationEnded{"nope"}, At(10)).status().code(),
            core::StatusCode::kNotFound);

  SchedulerConfig config;
  config.reservations.push_back(Standing("", "vision", 1));
  EXPECT_THAT(Scheduler::CheckConfig(config).message(),
              HasSubstr("config.reservations: reservation: a name is required"));
  Scheduler broken(config);
  EXPECT_THAT(broken.Handle(Tick{}, At(0)).status().message(), HasSubstr("a name is required"));
}

}  // namespace
}  // namespace gleaner::sched
