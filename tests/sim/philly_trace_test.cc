// The Philly readers on small files: the node series with a DST-repeated
// hour (duplicates, the first kept), telemetry gaps (active = 0: kept and
// marked) and dirty rows; the machine list with its blanks and units.
#include "sim/philly_trace.h"

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace gleaner::sim {
namespace {

core::Result<PhillyNodeSequence> Read(const testing::TempDir& dir, const std::string& text,
                                      bool skip = false) {
  PhillyReadOptions o;
  o.skip_bad_rows = skip;
  return ReadPhillyNodeSequence(dir.Write("seq.csv", text), o);
}

constexpr int64_t kOct3 = 1506988800;  // 2017-10-03 00:00:00 UTC

TEST(PhillyTraceTest, ReadsACleanSeries) {
  testing::TempDir dir;
  auto seq = Read(dir,
                  "time,active,total\n2017-10-03 00:00:00,312,420\n\n"
                  "2017-10-03 00:01:00,309,420\r\n");
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  ASSERT_EQ(seq->minutes.size(), 2u);
  EXPECT_EQ(seq->minutes[0].t_s, kOct3);
  EXPECT_EQ(seq->minutes[0].active_nodes, 312);
  EXPECT_EQ(seq->minutes[0].total_nodes, 420);
  EXPECT_FALSE(seq->minutes[0].gap);
  EXPECT_EQ(seq->minutes[1].t_s, kOct3 + 60);
  EXPECT_EQ(seq->cleaning.rows, 2);
  EXPECT_EQ(seq->gap_rows, 0);
}

TEST(PhillyTraceTest, FindsColumnsByName) {
  testing::TempDir dir;
  auto seq = Read(dir, "total,extra,time,active\n552,x,2017-11-01 12:00:00,400\n");
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  EXPECT_EQ(seq->minutes[0].active_nodes, 400);
  EXPECT_EQ(seq->minutes[0].total_nodes, 552);
}

TEST(PhillyTraceTest, ADstRepeatedHourIsDuplicatesAndTheFirstHourIsKept) {
  // Clocks go back at 02:00: 01:00-01:59 is written twice.
  std::string text = "time,active,total\n";
  for (int pass = 0; pass < 2; ++pass) {
    for (int minute : {0, 1, 59}) {
      text += "2017-11-05 01:" + std::string(minute < 10 ? "0" : "") + std::to_string(minute) +
              ":00," + std::to_string(100 + pass) + ",420\n";
    }
  }
  text += "2017-11-05 02:00:00,200,420\n";
  testing::TempDir dir;
  auto seq = Read(dir, text);
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  ASSERT_EQ(seq->minutes.size(), 4u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(seq->minutes[static_cast<size_t>(i)].active_nodes, 100);
  EXPECT_EQ(seq->minutes[3].active_nodes, 200);
  EXPECT_EQ(seq->cleaning.rows, 7);
  EXPECT_EQ(seq->cleaning.duplicate_times, 3);
  for (size_t i = 1; i < seq->minutes.size(); ++i) {
    EXPECT_LT(seq->minutes[i - 1].t_s, seq->minutes[i].t_s);
  }
}

TEST(PhillyTraceTest, ZeroActiveRowsAreKeptAsGaps) {
  testing::TempDir dir;
  auto seq = Read(dir,
                  "time,active,total\n2017-10-26 00:00:00,0,420\n2017-10-26 00:01:00,0,420\n"
                  "2017-10-26 18:02:00,300,420\n");
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  ASSERT_EQ(seq->minutes.size(), 3u);
  EXPECT_TRUE(seq->minutes[0].gap);
  EXPECT_TRUE(seq->minutes[1].gap);
  EXPECT_FALSE(seq->minutes[2].gap);
  EXPECT_EQ(seq->gap_rows, 2);
}

TEST(PhillyTraceTest, EachDirtyRowNamesItsLineAndWhatWasExpected) {
  const std::pair<std::string, std::string> cases[] = {
      {"2017-10-03 00:01:00,1", "seq.csv:3: expected 3 comma-separated fields as in the header"},
      {"2017-10-03T00:01:00,1,420", "seq.csv:3: column time: expected a time YYYY-MM-DD"},
      {"2017-13-03 00:01:00,1,420", "not a valid date and time"},
      {"2017-10-03 00:01:00,-1,420", "seq.csv:3: column active: expected an integer from 0"},
      {"2017-10-03 00:01:00,1.5,420", "column active: expected an integer"},
      {"2017-10-03 00:01:00,1,0", "seq.csv:3: column total: expected an integer from 1"},
      {"2017-10-03 00:01:00,,420",
       "column active: expected an integer from 0 to 1000000, got \"\""},
      {"2017-10-03 00:01:00,421,420", "seq.csv:3: active (421) exceeds total (420)"},
  };
  testing::TempDir dir;
  for (const auto& [row, want] : cases) {
    auto seq = Read(dir, "time,active,total\n2017-10-03 00:00:00,312,420\n" + row + "\n");
    ASSERT_FALSE(seq.ok()) << row;
    EXPECT_EQ(seq.status().code(), core::StatusCode::kInvalidArgument);
    EXPECT_NE(seq.status().message().find(want), std::string::npos) << seq.status().message();
    EXPECT_NE(seq.status().message().find("--skip-bad-rows"), std::string::npos);
  }
}

TEST(PhillyTraceTest, SkipBadRowsCountsThemAndKeepsTheRest) {
  testing::TempDir dir;
  auto seq = Read(dir,
                  "time,active,total\n2017-10-03 00:00:00,312,420\n2017-10-03 00:01:00,500,420\n"
                  "2017-10-03 00:02:00,310,420\nnonsense\n",
                  true);
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  ASSERT_EQ(seq->minutes.size(), 2u);
  EXPECT_EQ(seq->minutes[1].active_nodes, 310);
  EXPECT_EQ(seq->cleaning.bad_rows_skipped, 2);
  ASSERT_EQ(seq->skipped_messages.size(), 2u);
  EXPECT_NE(seq->skipped_messages[0].find("seq.csv:3: active (500)"), std::string::npos);
  EXPECT_NE(seq->skipped_messages[1].find("seq.csv:5: expected 3"), std::string::npos);
}

TEST(PhillyTraceTest, AFileWithoutRowsIsAnError) {
  testing::TempDir dir;
  EXPECT_NE(Read(dir, "").status().message().find("the file is empty"), std::string::npos);
  EXPECT_NE(Read(dir, "time,nodes,total\n").status().message().find("no column \"active\""),
            std::string::npos);
  EXPECT_NE(Read(dir, "time,active,total\n").status().message().find("no minute rows"),
            std::string::npos);
  EXPECT_EQ(ReadPhillyNodeSequence((dir.path() / "none.csv").string(), {}).status().code(),
            core::StatusCode::kNotFound);
}

TEST(PhillyTraceTest, ReadsTheMachineList) {
  testing::TempDir dir;
  auto machines = ReadPhillyMachines(
      dir.Write("cluster_machine_list",
                "machineId, number of GPUs, single GPU mem\nm0,2, 12GB\nm1 , 8 ,24GB\n\n"
                "m2,8, 512MB\n"));
  ASSERT_TRUE(machines.ok()) << machines.status().ToString();
  ASSERT_EQ(machines->size(), 3u);
  EXPECT_EQ((*machines)[0].id, "m0");
  EXPECT_EQ((*machines)[0].gpus, 2);
  EXPECT_EQ((*machines)[0].gpu_memory_bytes, int64_t{12} << 30);
  EXPECT_EQ((*machines)[1].id, "m1");
  EXPECT_EQ((*machines)[1].gpus, 8);
  EXPECT_EQ((*machines)[1].gpu_memory_bytes, int64_t{24} << 30);
  EXPECT_EQ((*machines)[2].gpu_memory_bytes, int64_t{512} << 20);
}

TEST(PhillyTraceTest, ABadMachineRowNamesItsLine) {
  const std::pair<std::string, std::string> cases[] = {
      {"m1,2", "list:3: expected 3 comma-separated fields"},
      {" ,2, 12GB", "list:3: column machineId: expected a machine id"},
      {"m1,0, 12GB", "list:3: column number of GPUs: expected an integer from 1 to 1024"},
      {"m1,2, 12", "list:3: column single GPU mem: expected an integer and a unit"},
      {"m1,2, 12TB", "column single GPU mem"},
      {"m0,2, 12GB", "list:3: column machineId: \"m0\" appeared on an earlier line"},
  };
  testing::TempDir dir;
  for (const auto& [row, want] : cases) {
    auto m = ReadPhillyMachines(
        dir.Write("list", "machineId, number of GPUs, single GPU mem\nm0,2, 12GB\n" + row + "\n"));
    ASSERT_FALSE(m.ok()) << row;
    EXPECT_NE(m.status().message().find(want), std::string::npos) << m.status().message();
  }
  EXPECT_NE(ReadPhillyMachines(dir.Write("list", "machineId, number of GPUs, single GPU mem\n"))
                .status()
                .message()
                .find("no machine rows"),
            std::string::npos);
}

}  // namespace
}  // namespace gleaner::sim
