// The Helios VC reader on small files: columns by name, times, duplicate
// and repeated times kept first, gaps accepted, every kind of dirty row an
// error naming the file and line or, with skip_bad_rows, counted.
#include "sim/helios_trace.h"

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace gleaner::sim {
namespace {

// The real files' header, all 24 columns.
constexpr const char* kHeader =
    "time,total_job_num,running_job_num,pending_job_num,total_gpujob_num,running_gpujob_num,"
    "pending_gpujob_num,total_gpu_num,running_gpu_num,pending_gpu_num,idle_gpu_num,gpu_"
    "utilization,running_gpu_num_noless_8,running_gpu_num_less_8,pending_gpu_num_noless_8,"
    "pending_gpu_num_less_8,total_gpu_num_noless_8,total_gpu_num_less_8,running_job_num_noless_8,"
    "running_job_num_less_8,pending_job_num_noless_8,pending_job_num_less_8,total_job_num_"
    "noless_8,total_job_num_less_8\n";

// A row of the real layout: time, then the GPU and job counts that matter.
std::string Row(const std::string& time, int total, int running, int pending, int idle,
                int pending_large, int pending_small, int running_jobs = 3, int pending_jobs = 1) {
  const auto s = [](int v) { return std::to_string(v); };
  return time + "," + s(running_jobs + pending_jobs) + "," + s(running_jobs) + "," +
         s(pending_jobs) + ",0,0,0," + s(total) + "," + s(running) + "," + s(pending) + "," +
         s(idle) + ",0.5,0,0," + s(pending_large) + "," + s(pending_small) + ",0,0,0,0,0,0,0,0\n";
}

core::Result<HeliosVc> Read(const testing::TempDir& dir, const std::string& text,
                            bool skip = false) {
  HeliosReadOptions o;
  o.skip_bad_rows = skip;
  return ReadHeliosVc(dir.Write("vcA.csv", text), o);
}

TEST(HeliosTraceTest, ReadsAllCountsOfACleanFile) {
  testing::TempDir dir;
  auto vc = Read(dir, std::string(kHeader) + Row("2020-05-01 00:00:00", 64, 59, 8, 5, 8, 0, 11, 2) +
                          Row("2020-05-01 00:01:00", 64, 60, 3, 4, 0, 3) + "\n");
  ASSERT_TRUE(vc.ok()) << vc.status().ToString();
  EXPECT_EQ(vc->name, "vcA");
  ASSERT_EQ(vc->minutes.size(), 2u);
  const HeliosMinute& m = vc->minutes[0];
  EXPECT_EQ(m.t_s, 1588291200);  // 2020-05-01 00:00:00 UTC
  EXPECT_EQ(m.total_gpus, 64);
  EXPECT_EQ(m.running_gpus, 59);
  EXPECT_EQ(m.pending_gpus, 8);
  EXPECT_EQ(m.idle_gpus, 5);
  EXPECT_EQ(m.running_jobs, 11);
  EXPECT_EQ(m.pending_jobs, 2);
  EXPECT_EQ(m.pending_gpus_large, 8);
  EXPECT_EQ(m.pending_gpus_small, 0);
  EXPECT_EQ(vc->minutes[1].t_s, 1588291260);
  EXPECT_EQ(vc->minutes[1].pending_gpus_small, 3);
  EXPECT_EQ(vc->cleaning.rows, 2);
  EXPECT_EQ(vc->cleaning.duplicate_times, 0);
  EXPECT_EQ(vc->cleaning.bad_rows_skipped, 0);
}

TEST(HeliosTraceTest, FindsColumnsByName) {
  testing::TempDir dir;
  auto vc = Read(dir,
                 "pending_gpu_num_less_8,idle_gpu_num,pending_job_num,running_job_num,time,"
                 "pending_gpu_num_noless_8,pending_gpu_num,running_gpu_num,total_gpu_num\r\n"
                 "2,6,1,4,2020-05-02 10:30:00,0,2,10,16\r\n");
  ASSERT_TRUE(vc.ok()) << vc.status().ToString();
  const HeliosMinute& m = vc->minutes[0];
  EXPECT_EQ(m.t_s, 1588291200 + 86400 + 10 * 3600 + 30 * 60);
  EXPECT_EQ(m.total_gpus, 16);
  EXPECT_EQ(m.running_gpus, 10);
  EXPECT_EQ(m.idle_gpus, 6);
  EXPECT_EQ(m.pending_gpus_small, 2);
  EXPECT_EQ(m.running_jobs, 4);
}

TEST(HeliosTraceTest, ARepeatedOrEarlierTimeIsADuplicateAndTheFirstIsKept) {
  testing::TempDir dir;
  auto vc = Read(dir, std::string(kHeader) + Row("2020-05-01 01:00:00", 64, 60, 0, 4, 0, 0) +
                          Row("2020-05-01 01:00:00", 64, 10, 0, 54, 0, 0) +  // same minute
                          Row("2020-05-01 01:01:00", 64, 61, 0, 3, 0, 0) +
                          Row("2020-05-01 00:01:00", 64, 1, 0, 63, 0, 0) +  // clock went back
                          Row("2020-05-01 01:02:00", 64, 62, 0, 2, 0, 0));
  ASSERT_TRUE(vc.ok()) << vc.status().ToString();
  ASSERT_EQ(vc->minutes.size(), 3u);
  EXPECT_EQ(vc->minutes[0].running_gpus, 60);
  EXPECT_EQ(vc->minutes[1].running_gpus, 61);
  EXPECT_EQ(vc->minutes[2].running_gpus, 62);
  EXPECT_EQ(vc->cleaning.rows, 5);
  EXPECT_EQ(vc->cleaning.duplicate_times, 2);
}

TEST(HeliosTraceTest, GapsAndPendingBesideIdleAreAccepted) {
  testing::TempDir dir;
  auto vc = Read(dir, std::string(kHeader) + Row("2020-05-01 00:00:00", 64, 50, 16, 14, 16, 0) +
                          Row("2020-05-01 03:00:00", 64, 50, 0, 10, 0, 0));  // 4 GPUs down
  ASSERT_TRUE(vc.ok()) << vc.status().ToString();
  EXPECT_EQ(vc->minutes.size(), 2u);
  EXPECT_EQ(vc->minutes[1].t_s - vc->minutes[0].t_s, 3 * 3600);
}

TEST(HeliosTraceTest, EachDirtyRowNamesItsLineAndWhatWasExpected) {
  const std::string good = Row("2020-05-01 00:00:00", 64, 59, 0, 5, 0, 0);
  const std::pair<std::string, std::string> cases[] = {
      {"2020-05-01 00:01:00,1,2\n", "vcA.csv:3: expected 24 comma-separated fields"},
      {Row("2020-05-01 00:01", 64, 59, 0, 5, 0, 0),
       "vcA.csv:3: column time: expected a time YYYY-MM-DD HH:MM:SS, got \"2020-05-01 00:01\""},
      {Row("2020-02-30 00:01:00", 64, 59, 0, 5, 0, 0), "vcA.csv:3: column time"},
      {Row("2020-05-01 24:00:00", 64, 59, 0, 5, 0, 0), "not a valid date and time"},
      {Row("2020-05-01 00:01:00", 64, -1, 0, 5, 0, 0),
       "vcA.csv:3: column running_gpu_num: expected an integer from 0 to 10000000, got \"-1\""},
      {Row("2020-05-01 00:01:00", 64, 59, 0, 5, 0, 0, -2),
       "vcA.csv:3: column running_job_num: expected an integer"},
      {Row("2020-05-01 00:01:00", 65, 59, 0, 5, 0, 0).replace(32, 2, "6.5"),
       "column total_gpu_num: expected an integer from 0 to 10000000, got \"6.5\""},
      {Row("2020-05-01 00:01:00", 64, 65, 0, 0, 0, 0),
       "vcA.csv:3: running_gpu_num (65) exceeds total_gpu_num (64)"},
      {Row("2020-05-01 00:01:00", 64, 0, 0, 65, 0, 0), "idle_gpu_num (65) exceeds total_gpu_num"},
      {Row("2020-05-01 00:01:00", 64, 60, 0, 5, 0, 0),
       "running_gpu_num + idle_gpu_num (65) exceeds total_gpu_num (64)"},
      {Row("2020-05-01 00:01:00", 64, 59, 4, 5, 8, 0),
       "pending_gpu_num_noless_8 (8) exceeds pending_gpu_num (4)"},
      {Row("2020-05-01 00:01:00", 64, 59, 4, 5, 0, 5),
       "pending_gpu_num_less_8 (5) exceeds pending_gpu_num (4)"},
  };
  testing::TempDir dir;
  for (const auto& [row, want] : cases) {
    auto vc = Read(dir, std::string(kHeader) + good + row);
    ASSERT_FALSE(vc.ok()) << row;
    EXPECT_EQ(vc.status().code(), core::StatusCode::kInvalidArgument);
    EXPECT_NE(vc.status().message().find(want), std::string::npos) << vc.status().message();
    EXPECT_NE(vc.status().message().find("--skip-bad-rows"), std::string::npos);
  }
}

TEST(HeliosTraceTest, SkipBadRowsCountsThemAndKeepsTheRest) {
  testing::TempDir dir;
  std::string text = kHeader + Row("2020-05-01 00:00:00", 64, 59, 0, 5, 0, 0) + "x,1\n" +
                     Row("2020-05-01 00:01:00", 64, 99, 0, 5, 0, 0) +
                     Row("2020-05-01 00:02:00", 64, 58, 0, 6, 0, 0);
  for (int i = 0; i < 12; ++i) text += "bad\n";
  auto vc = Read(dir, text, true);
  ASSERT_TRUE(vc.ok()) << vc.status().ToString();
  ASSERT_EQ(vc->minutes.size(), 2u);
  EXPECT_EQ(vc->minutes[1].running_gpus, 58);
  EXPECT_EQ(vc->cleaning.bad_rows_skipped, 14);
  EXPECT_EQ(vc->cleaning.rows, 16);
  ASSERT_EQ(vc->skipped_messages.size(), 10u);  // the first ten
  EXPECT_EQ(vc->skipped_messages[0].rfind(dir.path().string() + "/vcA.csv:3: ", 0), 0u)
      << vc->skipped_messages[0];
  EXPECT_NE(vc->skipped_messages[1].find("vcA.csv:4: running_gpu_num (99)"), std::string::npos)
      << vc->skipped_messages[1];
}

TEST(HeliosTraceTest, AFileWithoutHeaderOrRowsIsAnError) {
  testing::TempDir dir;
  EXPECT_NE(Read(dir, "").status().message().find("vcA.csv:1: the file is empty"),
            std::string::npos);
  EXPECT_NE(Read(dir, "time,total_gpu_num\n").status().message().find("no column"),
            std::string::npos);
  EXPECT_NE(Read(dir, kHeader).status().message().find("no minute rows"), std::string::npos);
  EXPECT_NE(Read(dir, std::string(kHeader) + "x\n", true)
                .status()
                .message()
                .find("after skipping 1 dirty"),
            std::string::npos);
  EXPECT_EQ(ReadHeliosVc((dir.path() / "none.csv").string(), {}).status().code(),
            core::StatusCode::kNotFound);
}

TEST(HeliosTraceTest, ADirectoryGivesItsVcFilesSortedByName) {
  testing::TempDir dir;
  const std::string text = std::string(kHeader) + Row("2020-05-01 00:00:00", 16, 8, 0, 8, 0, 0);
  dir.Write("vcb.csv", text);
  dir.Write("vcA.csv", text);
  dir.Write("notes.csv", "not a vc\n");
  dir.Write("vc9.txt", "not a csv\n");
  auto vcs = ReadHeliosDir(dir.path().string(), {});
  ASSERT_TRUE(vcs.ok()) << vcs.status().ToString();
  ASSERT_EQ(vcs->size(), 2u);
  EXPECT_EQ((*vcs)[0].name, "vcA");
  EXPECT_EQ((*vcs)[1].name, "vcb");

  testing::TempDir empty;
  auto none = ReadHeliosDir(empty.path().string(), {});
  EXPECT_EQ(none.status().code(), core::StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("holds no vc*.csv"), std::string::npos);
  EXPECT_EQ(ReadHeliosDir((empty.path() / "nope").string(), {}).status().code(),
            core::StatusCode::kNotFound);

  dir.Write("vcC.csv", std::string(kHeader) + "bad\n");
  auto dirty = ReadHeliosDir(dir.path().string(), {});
  EXPECT_NE(dirty.status().message().find("vcC.csv:2: expected 24"), std::string::npos)
      << dirty.status().message();
}

}  // namespace
}  // namespace gleaner::sim
