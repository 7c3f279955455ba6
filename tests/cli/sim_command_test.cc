// `gleaner sim replay`: the files it writes have the promised keys, two
// identical runs write identical metrics.json and report.html, and bad
// input is refused with the file and line.
#include "cli/sim_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/exit_codes.h"

namespace gleaner::cli {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class SimCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_ = TempPath("sim_trace.csv");
    std::ofstream(trace_) << "job_id,submission_time,duration,num_gpu\n"
                             "a,0,600,1\nb,5,1200,8\nc,5,700,16\nd,90,800,2\nbad,x,1,1\n";
  }
  int Run(const std::string& policy, const std::string& out_dir, bool skip, std::string* err) {
    SimReplayOptions o;
    o.itp = trace_;
    o.gpus = 16;
    o.policy = policy;
    o.out_dir = out_dir;
    o.seed = 3;
    o.skip_bad_rows = skip;
    std::ostringstream out, e;
    const int rc = RunSimReplay(o, out, e);
    *err = e.str();
    return rc;
  }
  std::string trace_;
};

TEST_F(SimCommandTest, WritesMetricsTimingAndReport) {
  for (const char* policy : {"fifo", "sjf", "gleaner"}) {
    const std::string dir = TempPath(std::string("sim_out_") + policy);
    std::string err;
    ASSERT_EQ(Run(policy, dir, true, &err), kExitOk) << err;
    EXPECT_NE(err.find("sim_trace.csv:6:"), std::string::npos) << err;
    const auto metrics = nlohmann::json::parse(Slurp(dir + "/metrics.json"));
    for (const char* key :
         {"trace", "policy", "gpus", "gpus_per_node", "seed", "jobs", "skipped_rows", "makespan_s",
          "mean_jct_s", "median_jct_s", "p99_jct_s", "mean_queue_s", "median_queue_s",
          "p99_queue_s", "utilization", "gpu_seconds", "peak_busy_gpus", "peak_queued_jobs",
          "multi_node_jobs_placed_beside"}) {
      EXPECT_TRUE(metrics.contains(key)) << policy << " " << key;
    }
    EXPECT_EQ(metrics["jobs"], 4);
    EXPECT_EQ(metrics["skipped_rows"], 1);
    EXPECT_EQ(metrics["trace"], "sim_trace.csv");  // a name, not a path
    const auto timing = nlohmann::json::parse(Slurp(dir + "/timing.json"));
    for (const char* key : {"wall_s", "jobs_per_s", "peak_rss_bytes"}) {
      EXPECT_TRUE(timing.contains(key)) << key;
    }
    EXPECT_GT(timing["peak_rss_bytes"].get<int64_t>(), 0);
    const std::string html = Slurp(dir + "/report.html");
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("<svg"), std::string::npos);
    EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no fetches
    EXPECT_EQ(html.find("<script"), std::string::npos);
  }
}

TEST_F(SimCommandTest, IdenticalRunsWriteIdenticalFiles) {
  std::string err;
  ASSERT_EQ(Run("gleaner", TempPath("sim_same_1"), true, &err), kExitOk) << err;
  ASSERT_EQ(Run("gleaner", TempPath("sim_same_2"), true, &err), kExitOk) << err;
  for (const char* file : {"/metrics.json", "/report.html"}) {
    EXPECT_EQ(Slurp(TempPath("sim_same_1") + file), Slurp(TempPath("sim_same_2") + file)) << file;
  }
}

TEST_F(SimCommandTest, ADirtyRowIsAnErrorWithoutSkipBadRows) {
  std::string err;
  EXPECT_EQ(Run("fifo", TempPath("sim_dirty"), false, &err), kExitBadInput);
  EXPECT_NE(err.find("sim_trace.csv:6: column submission_time"), std::string::npos) << err;
  EXPECT_NE(err.find("--skip-bad-rows"), std::string::npos) << err;
}

}  // namespace
}  // namespace gleaner::cli
