// GPUs shared with a quiet holder: only jobs that declared memory which fits
// go there, and a job that no longer fits is taken back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/scheduler.h"
#include "sched_test_util.h"

namespace gleaner::sched {
namespace {

using testing::At;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Lines;
using testing::MakeJob;
using testing::MakeNode;

JobRequest Declaring(JobId id, uint64_t gib) {
  JobRequest j = MakeJob(id, 1);
  j.gpu_memory = core::Bytes::GiB(gib);
  return j;
}

GpuVerdictChanged Beside(int gpu, uint64_t gib) {
  return {core::GpuUuid("GPU-a-" + std::to_string(gpu)), true, "held idle", core::Bytes::GiB(gib)};
}

// Node a: GPU 0 shared with 30 GiB to lend, GPU 1 not lendable.
Scheduler OneSharedGpu() {
  Scheduler s;
  EXPECT_TRUE(s.Handle(NodeAdded{MakeNode("a", 2)}, At(0)).ok());
  EXPECT_TRUE(
      s.Handle(GpuVerdictsChanged{{Beside(0, 30), {core::GpuUuid("GPU-a-1"), false, "busy", {}}}},
               At(0))
          .ok());
  return s;
}

TEST(ColocationSchedTest, OnlyAJobThatDeclaredWhatFitsGoesBesideAHolder) {
  Scheduler s = OneSharedGpu();
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{MakeJob(1, 1)}, At(1))), IsEmpty());     // undeclared
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Declaring(2, 40)}, At(1))), IsEmpty());  // too big
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{Declaring(3, 20)}, At(1))),
              ElementsAre(HasSubstr("start job 3")));
  // Jobs that fit whole GPUs are not rejected for being too big to share.
  EXPECT_EQ(s.Phase(2), JobPhase::kPending);
}

TEST(ColocationSchedTest, AJobThatNoLongerFitsIsTakenBack) {
  Scheduler s = OneSharedGpu();
  ASSERT_EQ(Lines(s.Handle(JobSubmitted{Declaring(1, 20)}, At(1))).size(), 1u);
  // The holder's peak grew a little: 25 GiB left, the job still fits.
  EXPECT_THAT(Lines(s.Handle(Beside(0, 25), At(2))), IsEmpty());
  EXPECT_THAT(Lines(s.Handle(Beside(0, 10), At(3))),
              ElementsAre("preempt job 1: GPU-a-0 (a gpu 0) lends only 10.0 GiB beside its "
                          "holder: held idle"));
}

TEST(ColocationSchedTest, AGpuLentWholeAgainTakesAnyJob) {
  Scheduler s = OneSharedGpu();
  ASSERT_THAT(Lines(s.Handle(JobSubmitted{MakeJob(1, 1)}, At(1))), IsEmpty());
  EXPECT_THAT(Lines(s.Handle(GpuVerdictChanged{core::GpuUuid("GPU-a-0"), true, "idle", {}}, At(2))),
              ElementsAre(HasSubstr("start job 1")));
}

TEST(ColocationSchedTest, SharedGpusDoNotChangeWhatANodeCanEverRun) {
  // A two-GPU job declaring 20 GiB: the node has two GPUs, one shared, one
  // not lendable; it waits rather than being rejected, and runs on both
  // once they are lent whole.
  Scheduler s = OneSharedGpu();
  JobRequest pair = Declaring(1, 20);
  pair.gpus = 2;
  EXPECT_THAT(Lines(s.Handle(JobSubmitted{pair}, At(1))), IsEmpty());
  EXPECT_EQ(s.Phase(1), JobPhase::kPending);
  EXPECT_THAT(Lines(s.Handle(GpuVerdictsChanged{{{core::GpuUuid("GPU-a-0"), true, "idle", {}},
                                                 {core::GpuUuid("GPU-a-1"), true, "idle", {}}}},
                             At(2))),
              ElementsAre(HasSubstr("start job 1")));
}

}  // namespace
}  // namespace gleaner::sched
