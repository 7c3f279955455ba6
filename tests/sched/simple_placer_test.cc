#include "sched/simple_placer.h"

#include <gtest/gtest.h>

namespace gleaner::sched {
namespace {

const core::TimePoint kT = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

FreeGpu Gpu(const char* uuid, const char* model, uint64_t gib) {
  return {core::GpuUuid(uuid), model, core::Bytes::GiB(gib)};
}

QueuedJob Job(JobId id, int gpus, PriorityClass c = PriorityClass::kNormal, int priority = 0,
              int age_s = 0) {
  QueuedJob j;
  j.id = id;
  j.spec.command = {"x"};
  j.spec.gpus = gpus;
  j.spec.priority_class = c;
  j.spec.priority = priority;
  j.submitted_at = kT - core::Seconds(age_s);
  return j;
}

TEST(SimplePlacerTest, OrderByClassPriorityThenAge) {
  const std::vector<FreeGpu> free{Gpu("GPU-1", "A100", 80)};
  auto one = [&](std::vector<QueuedJob> q) { return PlaceJobs(std::move(q), free).at(0).job; };
  EXPECT_EQ(one({Job(1, 1, PriorityClass::kOpportunistic), Job(2, 1)}), 2);
  EXPECT_EQ(one({Job(1, 1), Job(2, 1, PriorityClass::kCritical)}), 2);
  EXPECT_EQ(one({Job(1, 1, PriorityClass::kNormal, 1), Job(2, 1, PriorityClass::kNormal, 5)}), 2);
  EXPECT_EQ(
      one({Job(1, 1, PriorityClass::kNormal, 0, 10), Job(2, 1, PriorityClass::kNormal, 0, 99)}), 2);
  EXPECT_EQ(one({Job(2, 1), Job(1, 1)}), 1);  // same everything: lower id first
}

TEST(SimplePlacerTest, TightestFitKeepsBigGpusForBigNeeds) {
  QueuedJob small = Job(1, 1);
  QueuedJob big = Job(2, 1);
  big.spec.min_gpu_memory = core::Bytes::GiB(60);
  auto placed = PlaceJobs({small, big}, {Gpu("GPU-big", "H100", 80), Gpu("GPU-small", "L4", 24)});
  ASSERT_EQ(placed.size(), 2u);
  EXPECT_EQ(placed[0].gpus, std::vector<core::GpuUuid>{core::GpuUuid("GPU-small")});
  EXPECT_EQ(placed[1].gpus, std::vector<core::GpuUuid>{core::GpuUuid("GPU-big")});
}

TEST(SimplePlacerTest, GangsGetAllOrNothingAndModelsAreRespected) {
  QueuedJob gang = Job(1, 3);
  QueuedJob h100_only = Job(2, 1);
  h100_only.spec.gpu_models = {"H100"};
  QueuedJob any = Job(3, 1);
  auto placed = PlaceJobs({gang, h100_only, any}, {Gpu("GPU-a", "NVIDIA A100-SXM4-80GB", 80),
                                                   Gpu("GPU-b", "NVIDIA A100-SXM4-80GB", 80)});
  // The gang needs 3 of 2: skipped; the H100 job finds none; `any` runs.
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].job, 3);
  EXPECT_TRUE(PlaceJobs({Job(1, 1)}, {}).empty());
  EXPECT_FALSE(Fits(h100_only.spec, Gpu("GPU-a", "NVIDIA A100-SXM4-80GB", 80)));
  EXPECT_TRUE(Fits(h100_only.spec, Gpu("GPU-h", "NVIDIA H100 80GB HBM3", 80)));
}

}  // namespace
}  // namespace gleaner::sched
