// FitShape, the one list of what decides whether a job fits: each of its
// fields tells shapes apart, and nothing outside it does.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "sched/job_request.h"

namespace gleaner::sched {
namespace {

TEST(FitShapeTest, EveryFitFieldTellsShapesApart) {
  const std::vector<std::function<void(JobRequest&)>> changes = {
      [](JobRequest& r) { r.gpus = 2; },
      [](JobRequest& r) { r.max_gpus = 4; },
      [](JobRequest& r) { r.gpu_milli = 500; },
      [](JobRequest& r) { r.min_gpu_memory = core::Bytes::GiB(40); },
      [](JobRequest& r) { r.gpu_models = {"H100"}; },
      [](JobRequest& r) { r.gpu_memory = core::Bytes::GiB(10); },
      [](JobRequest& r) { r.nodes = 2; },
      [](JobRequest& r) { r.one_rack = true; },
      [](JobRequest& r) { r.cpu_milli = 4000; },
      [](JobRequest& r) { r.memory = core::Bytes::GiB(16); },
  };
  const JobRequest base;
  for (size_t i = 0; i < changes.size(); ++i) {
    JobRequest changed = base;
    changes[i](changed);
    EXPECT_NE(FitShape::Of(changed), FitShape::Of(base)) << "change " << i;
    // And a request made from the shape fits as the job does.
    EXPECT_EQ(FitShape::Of(FitShape::Of(changed).Request()), FitShape::Of(changed))
        << "change " << i;
  }
}

TEST(FitShapeTest, WhoAsksAndWhenDoNotChangeTheShape) {
  JobRequest a;
  JobRequest b;
  b.id = 7;
  b.user = "bob";
  b.project = "vision";
  b.priority = 10;
  b.priority_class = PriorityClass::kCritical;
  b.preemptible = false;
  b.checkpoints = true;
  b.expected_runtime = core::Seconds(600);
  EXPECT_EQ(FitShape::Of(a), FitShape::Of(b));
}

}  // namespace
}  // namespace gleaner::sched
