// `gleaner sim cross-cluster` on small VC files: the files it writes carry
// the promised keys, and each kind of bad input is refused with a message
// that says what to fix and the exit code cli/exit_codes.h gives it.
#include "cli/sim_cross_command.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/exit_codes.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner::cli {
namespace {

constexpr const char* kHeader =
    "time,total_gpu_num,running_gpu_num,pending_gpu_num,idle_gpu_num,running_job_num,"
    "pending_job_num,pending_gpu_num_noless_8,pending_gpu_num_less_8\n";

struct CrossRun {
  int rc;
  std::string out;
  std::string err;
};

CrossRun RunCross(const std::string& helios, const std::string& out_dir, bool skip = false) {
  SimCrossOptions o;
  o.helios_dir = helios;
  o.out_dir = out_dir;
  o.skip_bad_rows = skip;
  std::ostringstream out, err;
  const int rc = RunSimCross(o, out, err);
  return {rc, out.str(), err.str()};
}

TEST(SimCrossCommandTest, WritesMetricsTimingAndReport) {
  testing::TempDir dir;
  dir.Write("helios/vcA.csv", std::string(kHeader) +
                                  "2020-05-01 00:00:00,8,4,4,4,1,1,0,4\n"
                                  "2020-05-01 00:01:00,8,8,2,0,1,1,0,2\n");
  dir.Write("helios/vcB.csv", std::string(kHeader) +
                                  "2020-05-01 00:00:00,8,2,0,6,1,0,0,0\n"
                                  "2020-05-01 00:01:00,8,7,0,1,1,0,0,0\n"
                                  "2020-05-01 00:02:00,8,7,0,1,1,0,0,0\n");
  const std::string out = (dir.path() / "out").string();
  const CrossRun r = RunCross((dir.path() / "helios").string(), out);
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_NE(r.out.find("2 VCs, 2 minutes (1 left out"), std::string::npos) << r.out;
  const auto metrics = nlohmann::json::parse(testing::Slurp(out + "/metrics.json"));
  for (const char* key : {"vcs",
                          "gpus",
                          "first_minute",
                          "last_minute",
                          "minutes",
                          "minutes_dropped_unaligned",
                          "rows",
                          "duplicate_times",
                          "skipped_rows",
                          "minutes_pending_beside_idle",
                          "share_minutes_pending_beside_idle",
                          "idle_gpu_hours",
                          "pending_gpu_hours",
                          "lendable_gpu_hours",
                          "pending_small_gpu_hours",
                          "lendable_small_gpu_hours",
                          "pending_gpu_hours_after",
                          "pending_reduction_share",
                          "mean_pending_gpus_before",
                          "mean_pending_gpus_after",
                          "per_vc"}) {
    EXPECT_TRUE(metrics.contains(key)) << key;
  }
  for (const char* key : {"vc", "gpus", "pending_gpu_hours", "idle_gpu_hours", "borrow_gpu_hours",
                          "lend_gpu_hours"}) {
    EXPECT_TRUE(metrics["per_vc"][0].contains(key)) << key;
  }
  // Minute 0: vcA's 4 pending on vcB's 6 idle: 4. Minute 1: vcA's 2 on
  // vcB's 1: 1. Five GPU-minutes of six.
  EXPECT_EQ(metrics["minutes"], 2);
  EXPECT_DOUBLE_EQ(metrics["pending_reduction_share"].get<double>(), 0.833333);
  const auto timing = nlohmann::json::parse(testing::Slurp(out + "/timing.json"));
  for (const char* key : {"wall_s", "peak_rss_bytes"}) EXPECT_TRUE(timing.contains(key)) << key;
  const std::string html = testing::Slurp(out + "/report.html");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no fetches
}

TEST(SimCrossCommandTest, BadInputSaysWhatToFix) {
  testing::TempDir dir;
  const std::string out = (dir.path() / "out").string();

  CrossRun r = RunCross((dir.path() / "missing").string(), out);
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_NE(r.err.find("is not a directory; give the folder that holds the Helios vc*.csv"),
            std::string::npos)
      << r.err;

  dir.Write("empty/readme.txt", "nothing here\n");
  r = RunCross((dir.path() / "empty").string(), out);
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_NE(r.err.find("holds no vc*.csv file"), std::string::npos) << r.err;

  dir.Write("dirty/vcA.csv", std::string(kHeader) + "2020-05-01 00:00:00,8,4,4,4,1,1,0,4\n" +
                                 "2020-05-01 00:01:00,8,9,0,0,1,0,0,0\n");
  r = RunCross((dir.path() / "dirty").string(), out);
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_NE(r.err.find("vcA.csv:3: running_gpu_num (9) exceeds total_gpu_num (8)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--skip-bad-rows"), std::string::npos) << r.err;
  r = RunCross((dir.path() / "dirty").string(), out, true);
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_NE(r.err.find("skipped " + (dir.path() / "dirty/vcA.csv").string() + ":3:"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(nlohmann::json::parse(testing::Slurp(out + "/metrics.json"))["skipped_rows"], 1);

  dir.Write("apart/vcA.csv", std::string(kHeader) + "2020-05-01 00:00:00,8,4,4,4,1,1,0,4\n");
  dir.Write("apart/vcB.csv", std::string(kHeader) + "2020-05-02 00:00:00,8,4,4,4,1,1,0,4\n");
  r = RunCross((dir.path() / "apart").string(), out);
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_NE(r.err.find("no minute is present in every virtual cluster"), std::string::npos)
      << r.err;
}

TEST(SimCrossCommandTest, TheBinaryTakesItsFlags) {
  auto r = testing::Gleaner("sim cross-cluster --out /tmp/x");
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_NE(r.err.find("--helios"), std::string::npos) << r.err;
  r = testing::Gleaner("sim cross-cluster --help");
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_NE(r.out.find("--skip-bad-rows"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gleaner::cli
