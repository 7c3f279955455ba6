// The openb pods as a job stream on small files: the mapping of a clean
// file, the pods left out (no GPUs, never scheduled), dirty rows named by
// file and line, skipping them, and the QoS-to-priority order.
#include "sim/openb_jobs.h"

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace gleaner::sim {
namespace {

constexpr const char* kHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

core::Result<OpenbJobs> Read(const testing::TempDir& dir, const std::string& rows,
                             bool skip = false) {
  OpenbJobsOptions o;
  o.skip_bad_rows = skip;
  return ReadOpenbJobs(dir.Write("pods.csv", kHeader + rows), o);
}

TEST(OpenbJobsTest, MapsScheduledGpuPodsToJobs) {
  testing::TempDir dir;
  auto t = Read(dir,
                // 8 whole GPUs, LS: held 5000 - 110 = 4890 s; it waited 10 s in the
                // trace, which the replay does not keep.
                "p0,88000,327680,8,1000,,LS,Running,100,5000,110\n"
                "\n"
                // A share of one GPU takes one whole GPU; BE.
                "p1,4000,15258,1,220,,BE,Running,200,900,200\r\n"
                // Deleted the second it was scheduled: at least 1 s.
                "p2,6000,12288,2,1000,V100M16|V100M32,Burstable,Failed,300,300,300\n"
                "p3,6000,12288,4,1000,nan,Guaranteed,Succeeded,0,50,20\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 4u);
  const TraceJob& p0 = t->jobs[0];
  EXPECT_EQ(p0.submit_s, 100);
  EXPECT_EQ(p0.duration_s, 4890);
  EXPECT_EQ(p0.gpus, 8);
  EXPECT_EQ(p0.priority, 3);
  EXPECT_EQ(t->jobs[1].gpus, 1);
  EXPECT_EQ(t->jobs[1].duration_s, 700);
  EXPECT_EQ(t->jobs[1].priority, 0);
  EXPECT_EQ(t->jobs[2].duration_s, 1);
  EXPECT_EQ(t->jobs[2].priority, 1);
  EXPECT_EQ(t->jobs[3].submit_s, 0);
  EXPECT_EQ(t->jobs[3].duration_s, 30);
  EXPECT_EQ(t->jobs[3].priority, 2);
  // Model constraints from gpu_spec; "nan" and empty: any model.
  EXPECT_TRUE(p0.gpu_models.empty());
  EXPECT_EQ(t->jobs[2].gpu_models, (std::vector<std::string>{"V100M16", "V100M32"}));
  EXPECT_TRUE(t->jobs[3].gpu_models.empty());
  EXPECT_EQ(t->shared_gpu_jobs, 1);
  EXPECT_EQ(t->left_out_without_gpus, 0);
  EXPECT_EQ(t->left_out_never_scheduled, 0);
  EXPECT_EQ(t->skipped_rows, 0);
}

TEST(OpenbJobsTest, FindsColumnsByName) {
  testing::TempDir dir;
  OpenbJobsOptions o;
  auto t = ReadOpenbJobs(dir.Write("pods.csv",
                                   "scheduled_time,qos,deletion_time,num_gpu,creation_time,"
                                   "gpu_milli,name\n"
                                   "7,BE,70,2,5,1000,x\n"),
                         o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 1u);
  EXPECT_EQ(t->jobs[0].submit_s, 5);
  EXPECT_EQ(t->jobs[0].duration_s, 63);
  EXPECT_EQ(t->jobs[0].gpus, 2);
}

TEST(OpenbJobsTest, PodsWithoutGpusOrNeverScheduledAreLeftOutAndCounted) {
  testing::TempDir dir;
  auto t = Read(dir,
                "cpu,4000,8192,0,0,,LS,Running,10,500,10\n"
                // Without GPUs and never scheduled: counted once, as without GPUs.
                "cpu-pending,4000,8192,0,0,,BE,Pending,20,600,\n"
                "gpu-pending,4000,8192,1,1000,,BE,Pending,30,700,\n"
                // Pending when the trace ended, never deleted either.
                "gpu-pending-2,4000,8192,2,1000,,LS,Pending,40,,\n"
                "job,4000,8192,1,500,,LS,Running,50,80,60\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 1u);
  EXPECT_EQ(t->jobs[0].submit_s, 50);
  EXPECT_EQ(t->left_out_without_gpus, 2);
  EXPECT_EQ(t->left_out_never_scheduled, 2);
  EXPECT_EQ(t->skipped_rows, 0);  // left out is not dirt
}

TEST(OpenbJobsTest, AFileWithNothingToReplayIsAnError) {
  testing::TempDir dir;
  auto t = Read(dir, "cpu,4000,8192,0,0,,LS,Running,10,500,10\n");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("no pod to replay: 1 without GPUs"), std::string::npos)
      << t.status().ToString();
}

TEST(OpenbJobsTest, DirtyRowsNameTheFileAndLine) {
  const std::string good = "ok,1,1,1,1000,,LS,Running,0,10,0\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a,1,1,1,1000,,LS,Running,0,10\n", "expected 11 comma-separated fields"},
      {",1,1,1,1000,,LS,Running,0,10,0\n", "column name: expected a pod name"},
      {"ok,1,1,1,1000,,LS,Running,0,10,0\n", "\"ok\" appeared on an earlier line"},
      {"a,1,1,x,1000,,LS,Running,0,10,0\n", "column num_gpu: expected an integer from 0 to 8"},
      {"a,1,1,16,1000,,LS,Running,0,10,0\n", "column num_gpu"},
      {"a,1,1,1,0,,LS,Running,0,10,0\n", "column gpu_milli: expected an integer from 1 to 1000"},
      {"a,1,1,2,500,,LS,Running,0,10,0\n", "shares below 1000 are only for one GPU"},
      {"a,1,1,1,1000,,Gold,Running,0,10,0\n", "column qos: expected LS, Guaranteed"},
      {"a,1,1,1,1000,,LS,Running,-5,10,0\n", "column creation_time: expected an integer"},
      {"a,1,1,1,1000,,LS,Running,1.5,10,2\n", "column creation_time"},
      {"a,1,1,1,1000,,LS,Running,20,30,10\n", "column scheduled_time: expected an integer from 20"},
      {"a,1,1,1,1000,,LS,Running,0,5,10\n", "never before its scheduled_time"},
      {"a,1,1,1,1000,,LS,Running,0,,10\n", "column deletion_time"},
      {"a,1,1,1,1000,,LS,Pending,50,40,\n", "never before its creation_time"},
  };
  for (const auto& [row, want] : cases) {
    testing::TempDir dir;
    auto t = Read(dir, good + row);
    ASSERT_FALSE(t.ok()) << row;
    const std::string message(t.status().message());
    EXPECT_NE(message.find("pods.csv:3: "), std::string::npos) << row << message;
    EXPECT_NE(message.find(want), std::string::npos) << row << message;
    EXPECT_NE(message.find("--skip-bad-rows"), std::string::npos) << message;
  }
}

TEST(OpenbJobsTest, SkipBadRowsCountsThemAndKeepsTheRest) {
  testing::TempDir dir;
  auto t = Read(dir,
                "a,1,1,1,1000,,LS,Running,0,10,0\n"
                "b,1,1,1,1000,,Gold,Running,0,10,0\n"
                "c,1,1,0,0,,BE,Running,0,10,0\n"
                "d,1,1,1,1000,,LS,Running,0,5,10\n"
                "e,1,1,4,1000,,BE,Running,3,10,3\n",
                true);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(t->jobs[1].gpus, 4);
  EXPECT_EQ(t->skipped_rows, 2);
  ASSERT_EQ(t->skipped_messages.size(), 2u);
  EXPECT_EQ(t->skipped_messages[0].rfind(dir.path().string() + "/pods.csv:3: column qos", 0), 0u)
      << t->skipped_messages[0];
  EXPECT_NE(t->skipped_messages[1].find("pods.csv:5: "), std::string::npos);
  EXPECT_EQ(t->left_out_without_gpus, 1);
}

TEST(OpenbJobsTest, HeaderAndFileErrors) {
  testing::TempDir dir;
  OpenbJobsOptions o;
  auto t = ReadOpenbJobs(dir.Write("pods.csv", "name,num_gpu,gpu_milli,qos\n"), o);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("pods.csv:1: the header has no column \"creation_time\""),
            std::string::npos)
      << t.status().ToString();
  EXPECT_EQ(ReadOpenbJobs((dir.path() / "missing.csv").string(), o).status().code(),
            core::StatusCode::kNotFound);
  EXPECT_FALSE(ReadOpenbJobs(dir.Write("empty.csv", ""), o).ok());
}

TEST(OpenbJobsTest, QosOrderIsServingThenKubernetesClasses) {
  // LS (latency-sensitive serving) first, then Kubernetes' own order
  // Guaranteed > Burstable > BestEffort.
  EXPECT_EQ(OpenbQosPriority("LS"), 3);
  EXPECT_EQ(OpenbQosPriority("Guaranteed"), 2);
  EXPECT_EQ(OpenbQosPriority("Burstable"), 1);
  EXPECT_EQ(OpenbQosPriority("BE"), 0);
  EXPECT_EQ(OpenbQosPriority("BestEffort"), 0);
  EXPECT_FALSE(OpenbQosPriority("ls"));
  EXPECT_FALSE(OpenbQosPriority(""));
}

}  // namespace
}  // namespace gleaner::sim
