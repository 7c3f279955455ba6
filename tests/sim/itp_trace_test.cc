// The ITP job reader: clean files parse; each kind of dirty row is an error
// naming the file, the line and what was expected, or, with skip_bad_rows,
// is skipped and counted.
#include "sim/itp_trace.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gleaner::sim {
namespace {

core::Result<ItpTrace> Parse(const std::string& text, bool skip = false) {
  std::istringstream in(text);
  ItpReadOptions o;
  o.skip_bad_rows = skip;
  return ParseItpJobs(in, "c.csv", o);
}

constexpr const char* kHeader = "job_id,submission_time,duration,num_gpu\n";

TEST(ItpTraceTest, ReadsRowsInFileOrder) {
  auto t = Parse(std::string(kHeader) + "a,10,600,1\r\n\nb,5,1200,16\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(t->jobs[0].submit_s, 10);
  EXPECT_EQ(t->jobs[0].duration_s, 600);
  EXPECT_EQ(t->jobs[0].gpus, 1);
  EXPECT_EQ(t->jobs[1].submit_s, 5);
  EXPECT_EQ(t->jobs[1].gpus, 16);
  EXPECT_EQ(t->skipped_rows, 0);
}

TEST(ItpTraceTest, FindsColumnsByName) {
  auto t = Parse("num_gpu,duration,extra,job_id,submission_time\n4,700,x,j,3\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->jobs[0].gpus, 4);
  EXPECT_EQ(t->jobs[0].duration_s, 700);
  EXPECT_EQ(t->jobs[0].submit_s, 3);
}

TEST(ItpTraceTest, EachDirtyRowNamesItsLineAndWhatWasExpected) {
  const std::pair<std::string, std::string> cases[] = {
      {"b,1,600", "c.csv:3: expected 4 comma-separated fields as in the header, got 3"},
      {",1,600,1", "c.csv:3: column job_id: expected a job id"},
      {"b,-1,600,1", "c.csv:3: column submission_time: expected an integer from 0"},
      {"b,1.5,600,1", "c.csv:3: column submission_time: expected an integer"},
      {"b,1,0,1", "c.csv:3: column duration: expected an integer from 1"},
      {"b,1,600,", "c.csv:3: column num_gpu: expected an integer from 1 to 65536, got \"\""},
      {"b,1,600,0", "c.csv:3: column num_gpu: expected an integer from 1"},
      {"a,1,600,1", "c.csv:3: column job_id: \"a\" appeared on an earlier line"},
  };
  for (const auto& [row, want] : cases) {
    auto t = Parse(std::string(kHeader) + "a,0,600,1\n" + row + "\n");
    ASSERT_FALSE(t.ok()) << row;
    EXPECT_EQ(t.status().code(), core::StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find(want), std::string::npos) << t.status().message();
    EXPECT_NE(t.status().message().find("--skip-bad-rows"), std::string::npos);
  }
}

TEST(ItpTraceTest, SkipBadRowsCountsThemAndKeepsTheRest) {
  auto t = Parse(std::string(kHeader) + "a,0,600,1\nb,x,600,1\nc,1,600,2\nd,2,600\n", true);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(t->jobs[1].gpus, 2);
  EXPECT_EQ(t->skipped_rows, 2);
  ASSERT_EQ(t->skipped_messages.size(), 2u);
  EXPECT_EQ(t->skipped_messages[0].rfind("c.csv:3: ", 0), 0u) << t->skipped_messages[0];
  EXPECT_EQ(t->skipped_messages[1].rfind("c.csv:5: ", 0), 0u) << t->skipped_messages[1];
}

TEST(ItpTraceTest, AFileWithoutHeaderOrRowsIsAnError) {
  EXPECT_NE(Parse("").status().message().find("c.csv:1: the file is empty"), std::string::npos);
  EXPECT_NE(Parse("job_id,submit,duration,num_gpu\n")
                .status()
                .message()
                .find("no column \"submission_time\""),
            std::string::npos);
  EXPECT_NE(Parse(kHeader).status().message().find("no job rows"), std::string::npos);
  EXPECT_NE(Parse(std::string(kHeader) + "a,x,1,1\n", true)
                .status()
                .message()
                .find("after skipping 1 dirty"),
            std::string::npos);
}

TEST(ItpTraceTest, AMissingFileIsNotFound) {
  EXPECT_EQ(ReadItpJobs("/nonexistent/c.csv", {}).status().code(), core::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gleaner::sim
