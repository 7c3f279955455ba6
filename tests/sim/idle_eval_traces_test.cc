// gleaner's idle verdicts on the real Alibaba GenAI utilization trace
// (../shared/traces or GLEANER_TRACE_DIR): better than every baseline.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "sim/idle_eval.h"
#include "testing/trace_dir.h"

namespace gleaner::sim {
namespace {

using testing::TraceDir;

TEST(IdleEvalTracesTest, GleanerBeatsEveryBaselineOnF1) {
  const std::string path = TraceDir() + "/alibaba-genai/pod_gpu_duty_cycle_anon.csv";
  GLEANER_SKIP_WITHOUT_TRACE(path);
  TraceCleaning cleaning;
  auto series = ReadUtilizationTrace(path, "", false, &cleaning);
  ASSERT_TRUE(series.ok()) << series.status().ToString();
  const IdleEvalReport r = EvaluateIdle(*series, {});
  ASSERT_EQ(r.classifiers.front().name, "gleaner");
  const IdleScore& gleaner = r.classifiers.front();
  for (size_t i = 1; i < r.classifiers.size(); ++i) {
    EXPECT_GT(gleaner.f1_10m, r.classifiers[i].f1_10m) << r.classifiers[i].name;
    EXPECT_GT(gleaner.f1_30m, r.classifiers[i].f1_30m) << r.classifiers[i].name;
  }
  // More precise than the window rules at no loss of recall against the
  // 10-minute window: it strictly dominates that baseline.
  for (const IdleScore& s : r.classifiers) {
    if (s.name != "fixed_window_10m") continue;
    EXPECT_GT(gleaner.precision_10m, s.precision_10m);
    EXPECT_GT(gleaner.recall_10m, s.recall_10m);
  }
}

}  // namespace
}  // namespace gleaner::sim
