#include "core/csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

namespace gleaner::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Split(std::string_view line, CsvBlanks blanks = CsvBlanks::kKeep) {
  std::vector<std::string> fields;
  EXPECT_EQ(SplitCsvRow(line, blanks, &fields), "") << line;
  return fields;
}

TEST(CsvTest, QuotedFieldsHoldCommasAndDoubledQuotes) {
  EXPECT_THAT(Split("a,\"b, c\",\"say \"\"hi\"\"\",d"),
              ElementsAre("a", "b, c", "say \"hi\"", "d"));
  EXPECT_THAT(Split("\"\",,\"\"\"\""), ElementsAre("", "", "\""));
  // A quote inside an unquoted field is an ordinary character.
  EXPECT_THAT(Split("5\" disk,x"), ElementsAre("5\" disk", "x"));
}

TEST(CsvTest, EveryCommaStartsAField) {
  EXPECT_THAT(Split(""), ElementsAre(""));
  EXPECT_THAT(Split(","), ElementsAre("", ""));
  EXPECT_THAT(Split("a,"), ElementsAre("a", ""));
}

TEST(CsvTest, BlanksAreKeptOrTrimmedOutsideQuotesOnly) {
  EXPECT_THAT(Split(" a , \" b \" ,c"), ElementsAre(" a ", " \" b \" ", "c"));
  EXPECT_THAT(Split(" a ,\t\" b \" ,c\t", CsvBlanks::kTrim), ElementsAre("a", " b ", "c"));
}

TEST(CsvTest, AnUnclosedQuoteIsReported) {
  std::vector<std::string> fields;
  EXPECT_EQ(SplitCsvRow("a,\"b,c", CsvBlanks::kKeep, &fields), "a quoted field is not closed");
  EXPECT_EQ(SplitCsvRow("\"a\"\"", CsvBlanks::kKeep, &fields), "a quoted field is not closed");
}

TEST(CsvTest, ReusedFieldsShrinkToTheRow) {
  std::vector<std::string> fields;
  ASSERT_EQ(SplitCsvRow("a,b,c,d", CsvBlanks::kKeep, &fields), "");
  ASSERT_EQ(SplitCsvRow("x,y", CsvBlanks::kKeep, &fields), "");
  EXPECT_THAT(fields, ElementsAre("x", "y"));
}

TEST(CsvTest, ReaderNumbersLinesSkipsBlanksAndChecksWidth) {
  std::istringstream in("\n\"name\",count\r\n a,1\r\n\n  \nb\nc,\"3\n");
  Result<CsvReader> reader = CsvReader::Over(in, "t.csv", CsvBlanks::kTrim);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_THAT(reader->header(), ElementsAre("name", "count"));
  EXPECT_EQ(reader->header_line(), "\"name\",count");
  EXPECT_EQ(reader->Find("count"), 1u);
  EXPECT_EQ(reader->Find("other"), std::nullopt);

  ASSERT_TRUE(reader->Next());
  EXPECT_EQ(reader->line(), 3);
  EXPECT_THAT(reader->fields(), ElementsAre("a", "1"));
  EXPECT_EQ(reader->RowProblem(), "");

  ASSERT_TRUE(reader->Next());
  EXPECT_EQ(reader->line(), 6);
  EXPECT_EQ(reader->RowProblem(), "expected 2 comma-separated fields as in the header, got 1");
  EXPECT_EQ(reader->At("bad"), "t.csv:6: bad");

  ASSERT_TRUE(reader->Next());
  EXPECT_EQ(reader->line(), 7);
  EXPECT_EQ(reader->RowProblem(), "a quoted field is not closed");
  EXPECT_FALSE(reader->Next());
}

TEST(CsvTest, MissingColumnsNameTheHeaderLine) {
  std::istringstream in("\na,b\n1,2\n");
  Result<CsvReader> reader = CsvReader::Over(in, "t.csv", CsvBlanks::kKeep);
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(reader->Next());
  Result<std::vector<size_t>> at = reader->FindColumns({"b", "a"}, "a and b");
  ASSERT_TRUE(at.ok());
  EXPECT_THAT(*at, ElementsAre(1u, 0u));
  const Status missing = reader->FindColumns({"a", "c"}, "a and c").status();
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(missing.message(),
            "t.csv:2: the header has no column \"c\"; expected a and c, got \"a,b\"");
}

TEST(CsvTest, EmptyMissingAndUnsplittableFilesAreErrors) {
  std::istringstream blank("\n \n");
  EXPECT_THAT(CsvReader::Over(blank, "e.csv", CsvBlanks::kKeep).status().message(),
              HasSubstr("e.csv:1: the file is empty; expected a header line"));
  std::istringstream bad_header("a,\"b\n");
  EXPECT_EQ(CsvReader::Over(bad_header, "h.csv", CsvBlanks::kKeep).status().message(),
            "h.csv:1: the header: a quoted field is not closed");
  EXPECT_EQ(CsvReader::Open("/nonexistent/x.csv", CsvBlanks::kKeep).status().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace gleaner::core
