#include "sim/utilization_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace gleaner::sim {
namespace {

using ::testing::HasSubstr;

TEST(UtilizationTraceTest, ReadsSortsAndCleans) {
  testing::TempDir dir;
  const std::string path = dir.Write("u.csv",
                                     "value,timestamp_anon,container_ip\n"
                                     "5.0,120.0,b\n"
                                     "0.0,60.0,a\n"
                                     "7.5,0.0,a\n"
                                     "9.0,60.0,a\n"   // duplicate time: first kept
                                     "nan,180.0,a\n"  // non-finite: dropped
                                     "\n"
                                     "1.0,120.0,a\r\n");
  TraceCleaning cleaning;
  auto series = ReadUtilizationTrace(path, "", false, &cleaning);
  ASSERT_TRUE(series.ok()) << series.status().ToString();
  ASSERT_EQ(series->size(), 2u);
  const UtilizationSeries& a = (*series)[0];
  EXPECT_EQ(a.id, "a");
  ASSERT_EQ(a.points.size(), 3u);
  EXPECT_EQ(core::ToUnixMicros(a.points[0].at), 0);
  EXPECT_DOUBLE_EQ(a.points[0].utilization_pct, 7.5);
  EXPECT_DOUBLE_EQ(a.points[1].utilization_pct, 0.0);
  EXPECT_DOUBLE_EQ(a.points[2].utilization_pct, 1.0);
  EXPECT_EQ(cleaning.rows, 6);
  EXPECT_EQ(cleaning.duplicate_times, 1);
  EXPECT_EQ(cleaning.non_finite, 1);
}

TEST(UtilizationTraceTest, JoinsMemoryByNearestTime) {
  testing::TempDir dir;
  const std::string util =
      dir.Write("u.csv", "value,timestamp_anon,container_ip\n0,0,a\n0,57,a\n0,300,a\n");
  const std::string mem = dir.Write("m.csv",
                                    "timestamp_anon,value,container_ip\n"
                                    "1,1073741824,a\n55,2147483648,a\n");
  TraceCleaning cleaning;
  auto series = ReadUtilizationTrace(util, mem, false, &cleaning);
  ASSERT_TRUE(series.ok()) << series.status().ToString();
  const auto& p = (*series)[0].points;
  EXPECT_EQ(p[0].memory_used, core::Bytes::GiB(1));
  EXPECT_EQ(p[1].memory_used, core::Bytes::GiB(2));
  EXPECT_FALSE(p[2].memory_used.has_value());  // nothing within 60 s
}

TEST(UtilizationTraceTest, BadRowsNameFileAndLine) {
  testing::TempDir dir;
  const std::string path =
      dir.Write("u.csv", "value,timestamp_anon,container_ip\n1,0,a\nhigh,60,a\n2,120,a\n");
  TraceCleaning cleaning;
  auto series = ReadUtilizationTrace(path, "", false, &cleaning);
  ASSERT_FALSE(series.ok());
  EXPECT_THAT(series.status().message(),
              HasSubstr(path + ":3: value is not a number: \"high\" (pass --skip-bad-rows"));

  TraceCleaning skipping;
  auto skipped = ReadUtilizationTrace(path, "", true, &skipping);
  ASSERT_TRUE(skipped.ok());
  EXPECT_EQ((*skipped)[0].points.size(), 2u);
  EXPECT_EQ(skipping.bad_rows_skipped, 1);

  const std::string short_row = dir.Write("s.csv", "value,timestamp_anon,container_ip\n1,0\n");
  EXPECT_THAT(ReadUtilizationTrace(short_row, "", false, &cleaning).status().message(),
              HasSubstr(":2: expected 3 comma-separated fields as in the header, got 2"));
  const std::string no_header = dir.Write("h.csv", "a,b,c\n1,2,3\n");
  EXPECT_THAT(ReadUtilizationTrace(no_header, "", false, &cleaning).status().message(),
              HasSubstr(":1: expected a header with columns value"));
  EXPECT_EQ(
      ReadUtilizationTrace(dir.path().string() + "/none.csv", "", false, &cleaning).status().code(),
      core::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gleaner::sim
