#include "sched/scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

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

JobRequest Opportunistic(JobId id, int gpus) {
  JobRequest j = MakeJob(id, gpus);
  j.priority_class = PriorityClass::kOpportunistic;
  return j;
}

JobRequest Critical(JobId id, int gpus) {
  JobRequest j = MakeJob(id, gpus);
  j.priority_class = PriorityClass::kCritical;
  return j;
}

TEST(SchedulerTest, TheLeastWorkIsLost_ACheckpointedJobGoesFirst) {
  SchedulerConfig config;
  config.min_runtime = core::Seconds(60);
  Scheduler s(config);
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 2)}, At(0)).ok());
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Opportunistic(1, 1)}, At(0))),
              ElementsAre("start job 1 on a gpus 0"));
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Opportunistic(2, 1)}, At(4000))),
              ElementsAre("start job 2 on a gpus 1"));
  // Job 1 has run longer but saved its state a moment ago.
  ASSERT_TRUE(s.Handle(JobCheckpointed{1}, At(4900)).ok());
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Critical(3, 1)}, At(5000))),
              ElementsAre(HasSubstr("preempt job 1: for job 3 (critical")));
  EXPECT_EQ(s.Phase(1), JobPhase::kVacating);
  EXPECT_EQ(s.Phase(2), JobPhase::kRunning);
}

// A new leader's scheduler is told of the jobs already running: they hold
// their GPUs, count for quotas and can be preempted.
TEST(SchedulerTest, AJobAlreadyRunningHoldsItsGpusAndCanBePreempted) {
  SchedulerConfig config;
  config.min_runtime = core::Seconds(60);
  Scheduler s(config);
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 2)}, At(0)).ok());
  const JobRunning running{
      Opportunistic(7, 1), core::NodeId("a"), {core::GpuUuid("GPU-a-1")}, At(-500), At(-400)};
  EXPECT_TRUE(Lines(s.Handle(running, At(0))).empty());
  EXPECT_EQ(s.Phase(7), JobPhase::kRunning);
  ASSERT_TRUE(s.Allocation(7).has_value());
  EXPECT_EQ(s.Allocation(7)->gpus, std::vector<core::GpuUuid>{core::GpuUuid("GPU-a-1")});
  // Told twice, or onto a GPU it cannot hold: refused, nothing changes.
  EXPECT_THAT(Lines(s.Handle(running, At(1))), ElementsAre(HasSubstr("known already")));
  EXPECT_THAT(
      Lines(s.Handle(
          JobRunning{
              Opportunistic(8, 1), core::NodeId("a"), {core::GpuUuid("GPU-a-1")}, At(0), At(0)},
          At(1))),
      ElementsAre(HasSubstr("other jobs hold it")));
  EXPECT_THAT(
      Lines(s.Handle(
          JobRunning{
              Opportunistic(8, 1), core::NodeId("a"), {core::GpuUuid("GPU-b-0")}, At(0), At(0)},
          At(1))),
      ElementsAre(HasSubstr("no GPU GPU-b-0 on node a")));
  // The other GPU is free; the running job's is not.
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Opportunistic(1, 1)}, At(2))),
              ElementsAre("start job 1 on a gpus 0"));
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Critical(2, 1)}, At(3))),
              ElementsAre(HasSubstr("preempt job 7: for job 2 (critical")));
  EXPECT_THAT(Lines(s.Handle(JobFailed{7, "vacated"}, At(4))),
              ElementsAre(HasSubstr("requeue job 7"), "start job 2 on a gpus 1"));
  EXPECT_EQ(s.Phase(2), JobPhase::kRunning);
}

TEST(SchedulerTest, NonPreemptibleCriticalAndYoungJobsAreNeverVictims) {
  SchedulerConfig config;
  config.min_runtime = core::Seconds(600);
  Scheduler s(config);
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 3)}, At(0)).ok());
  JobRequest stubborn = Opportunistic(1, 1);
  stubborn.preemptible = false;
  JobRequest critical = Critical(2, 1);
  critical.preemptible = true;  // ignored: critical work is never preempted
  ASSERT_EQ(Lines(s.Handle(JobSubmitted{stubborn}, At(0))).size(), 1u);
  ASSERT_EQ(Lines(s.Handle(JobSubmitted{critical}, At(0))).size(), 1u);
  ASSERT_EQ(Lines(s.Handle(JobSubmitted{Opportunistic(3, 1)}, At(1000))).size(), 1u);
  // Job 3 is the only candidate, and it is 100 s old: protected.
  EXPECT_TRUE(Lines(s.Handle(JobSubmitted{Critical(4, 1)}, At(1100))).empty());
  EXPECT_TRUE(Lines(s.Handle(Tick{}, At(1500))).empty());
  EXPECT_THAT(Lines(s.Handle(Tick{}, At(1600))), ElementsAre(HasSubstr("preempt job 3")));
}

TEST(SchedulerTest, AnOwnerTakesBackEvenACriticalJobsGpu) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 1)}, At(0)).ok());
  ASSERT_EQ(Lines(s.Handle(JobSubmitted{Critical(1, 1)}, At(0))).size(), 1u);
  EXPECT_THAT(
      Lines(s.Handle(GpuVerdictChanged{core::GpuUuid("GPU-a-0"), false, "owner returned", {}},
                     At(1))),
      ElementsAre("preempt job 1: GPU-a-0 (a gpu 0) is no longer lendable: owner returned"));
}

TEST(SchedulerTest, CancelledJobsLeaveWithoutARequeue) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 1)}, At(0)).ok());
  ASSERT_EQ(Lines(s.Handle(JobSubmitted{MakeJob(1, 1)}, At(0))).size(), 1u);
  ASSERT_TRUE(s.Handle(JobSubmitted{MakeJob(2, 1)}, At(0)).ok());
  ASSERT_TRUE(s.Handle(JobCancelled{2}, At(1)).ok());
  EXPECT_EQ(s.Phase(2), JobPhase::kUnknown);
  EXPECT_EQ(s.pending_count(), 0u);
  ASSERT_TRUE(s.Handle(JobCancelled{1}, At(2)).ok());
  EXPECT_EQ(s.Phase(1), JobPhase::kRunning);  // until its process is gone
  ASSERT_TRUE(
      s.Handle(GpuVerdictChanged{core::GpuUuid("GPU-a-0"), false, "owner", {}}, At(3)).ok());
  EXPECT_TRUE(Lines(s.Handle(JobFailed{1, "killed"}, At(4))).empty());  // no requeue
  EXPECT_EQ(s.Phase(1), JobPhase::kUnknown);
  EXPECT_EQ(s.cluster().free_milli(), 0);  // the GPU is back, but not lendable
  EXPECT_EQ(s.Handle(JobCancelled{1}, At(5)).status().code(), core::StatusCode::kNotFound);
}

TEST(SchedulerTest, AllocationNamesTheNodeAndGpus) {
  Scheduler s;
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 8, {{0, 1, 2, 3}, {4, 5, 6, 7}})}, At(0)).ok());
  ASSERT_TRUE(s.Handle(JobSubmitted{MakeJob(1, 2)}, At(0)).ok());
  auto a = s.Allocation(1);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->node.str(), "a");
  EXPECT_THAT(a->gpu_indices, ElementsAre(0, 1));
  EXPECT_THAT(a->gpus, ElementsAre(core::GpuUuid("GPU-a-0"), core::GpuUuid("GPU-a-1")));
  EXPECT_FALSE(s.Allocation(2));
  EXPECT_EQ(s.PendingReason(1).status().code(), core::StatusCode::kNotFound);
}

TEST(SchedulerTest, EventPassesStopAfterTheirDepthTicksGoAllTheWay) {
  SchedulerConfig config;
  config.event_pass_depth = 2;
  Scheduler s(config);
  ASSERT_TRUE(s.Handle(NodeAdded{MakeNode("a", 2)}, At(0)).ok());
  ASSERT_EQ(Lines(s.Handle(JobSubmitted{MakeJob(1, 2)}, At(0))).size(), 1u);
  for (JobId id = 2; id <= 4; ++id) {
    JobRequest gang = MakeJob(id, 2);
    gang.priority = 10;  // ahead of job 5
    ASSERT_TRUE(s.Handle(JobSubmitted{gang}, At(1)).ok());
  }
  ASSERT_TRUE(s.Handle(JobSubmitted{MakeJob(5, 1)}, At(1)).ok());
  ASSERT_TRUE(
      s.Handle(GpuVerdictChanged{core::GpuUuid("GPU-a-1"), false, "owner", {}}, At(2)).ok());
  // Job 1 leaves: one GPU lendable. Jobs 2 and 3 miss, the pass stops.
  const auto after_exit = Lines(s.Handle(JobFailed{1, ""}, At(3)));
  EXPECT_THAT(after_exit, ElementsAre(HasSubstr("requeue job 1")));
  EXPECT_THAT(*s.PendingReason(5), HasSubstr("not reached by the last pass"));
  EXPECT_THAT(*s.PendingReason(2), HasSubstr("the largest free set is 1 on a"));
  EXPECT_THAT(Lines(s.Handle(Tick{}, At(4))), ElementsAre("start job 5 on a gpus 0"));
}

TEST(SchedulerTest, TheSameEventsGiveTheSameDecisions) {
  // A seeded stream of submits, exits, verdicts and ticks on 20 mixed
  // nodes, through two schedulers: identical actions, line by line.
  std::mt19937 rng(42);
  std::vector<std::pair<Event, core::TimePoint>> events;
  for (int n = 0; n < 20; ++n) {
    events.push_back(
        {NodeAdded{MakeNode("n" + std::to_string(n), n % 3 == 0 ? 4 : 8, {{0, 1, 2, 3}})}, At(0)});
  }
  JobId next = 1;
  for (int t = 1; t < 400; ++t) {
    switch (rng() % 5) {
      case 0:
      case 1: {
        JobRequest j = MakeJob(next++, static_cast<int>(1 + rng() % 4));
        if (rng() % 4 == 0) j.gpus = 1, j.gpu_milli = static_cast<int>(100 + rng() % 800);
        j.priority_class = static_cast<PriorityClass>(rng() % 3);
        j.project = "p" + std::to_string(rng() % 3);
        events.push_back({JobSubmitted{j}, At(t * 60)});
        break;
      }
      case 2:
        events.push_back(
            {JobFinished{static_cast<JobId>(1 + rng() % static_cast<uint64_t>(next))}, At(t * 60)});
        break;
      case 3:
        events.push_back({GpuVerdictChanged{core::GpuUuid("GPU-n" + std::to_string(rng() % 20) +
                                                          "-" + std::to_string(rng() % 4)),
                                            rng() % 2 == 0,
                                            "verdict",
                                            {}},
                          At(t * 60)});
        break;
      default:
        events.push_back({Tick{}, At(t * 60)});
    }
  }
  const auto run = [&] {
    Scheduler s;
    std::vector<std::string> log;
    for (const auto& [e, at] : events) {
      auto r = s.Handle(e, at);
      if (r.ok()) {
        for (const Action& a : *r) log.push_back(ToString(a));
      } else {
        log.push_back("error: " + r.status().message());
      }
    }
    return log;
  };
  const auto first = run();
  EXPECT_GT(first.size(), 100u);
  EXPECT_EQ(first, run());
}

}  // namespace
}  // namespace gleaner::sched

namespace gleaner::sched {
namespace {

TEST(JobRequestTest, FromASpecAndShapeChecks) {
  JobSpec spec;
  spec.command = {"train"};
  spec.gpus = 4;
  spec.project = "vision";
  spec.priority_class = PriorityClass::kOpportunistic;
  spec.gpu_models = {"H100"};
  const JobRequest r = RequestFromSpec(7, spec, "alice");
  EXPECT_EQ(r.id, 7);
  EXPECT_EQ(r.user, "alice");
  EXPECT_EQ(r.total_milli(), 4000);
  EXPECT_EQ(r.gpu_models, spec.gpu_models);
  EXPECT_TRUE(r.may_be_preempted());
  EXPECT_TRUE(ValidateRequestShape(r).ok());
  JobRequest loud = r;
  loud.priority = 1001;
  EXPECT_THAT(ValidateRequestShape(loud).message(), HasSubstr("priority: -1000..1000"));
  JobRequest share = testing::MakeJob(1, 1, 0);
  EXPECT_THAT(ValidateRequestShape(share).message(), HasSubstr("gpu_milli: 1..1000"));
  JobRequest critical = r;
  critical.priority_class = PriorityClass::kCritical;
  EXPECT_FALSE(critical.may_be_preempted());  // whatever `preemptible` says
}

TEST(WaitReasonTest, NeedsAreSaidInAUsersWords) {
  JobRequest j = testing::MakeJob(1, 1, 250);
  EXPECT_EQ(DescribeNeed(j), "0.25 of a GPU (250 milli)");
  j = testing::MakeJob(1, 2);
  j.gpu_models = {"H100", "A100"};
  j.min_gpu_memory = core::Bytes::GiB(40);
  EXPECT_EQ(DescribeNeed(j), "2 GPUs (model H100 or A100, at least 40 GiB)");
  EXPECT_EQ(MilliAsGpus(2500), "2.5");
  EXPECT_EQ(MilliAsGpus(3000), "3");
}

}  // namespace
}  // namespace gleaner::sched
