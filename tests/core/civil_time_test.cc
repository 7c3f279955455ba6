#include "core/civil_time.h"

#include <gtest/gtest.h>

#include "core/format.h"

namespace gleaner::core {
namespace {

TimePoint At(int64_t unix_s, int64_t micros = 0) {
  return FromUnixMicros(unix_s * 1'000'000 + micros);
}

TEST(CivilTimeTest, FieldsOfAnInstantAndBack) {
  // 2024-02-29 is a leap day, a Thursday.
  const CivilTime c = ToCivil(At(1709210096, 123456));
  EXPECT_EQ(c.year, 2024);
  EXPECT_EQ(c.month, 2u);
  EXPECT_EQ(c.day, 29u);
  EXPECT_EQ(c.hour, 12);
  EXPECT_EQ(c.minute, 34);
  EXPECT_EQ(c.second, 56);
  EXPECT_EQ(c.micros, 123456);
  EXPECT_EQ(c.weekday, 4u);
  EXPECT_EQ(FromCivil(c), At(1709210096, 123456));
}

TEST(CivilTimeTest, BeforeNineteenSeventyTheSecondIsFloored) {
  EXPECT_EQ(Rfc3339(At(-1, 433'000)), "1969-12-31T23:59:59.433Z");
}

TEST(CivilTimeTest, FieldsThatNameNoInstantAreRefused) {
  EXPECT_FALSE(DaysFromCivil(2026, 2, 29));
  EXPECT_FALSE(DaysFromCivil(2026, 13, 1));
  EXPECT_EQ(DaysFromCivil(1970, 1, 2), 1);
  CivilTime c;
  c.hour = 24;
  EXPECT_FALSE(FromCivil(c));
  c.hour = 0;
  c.second = 60;
  EXPECT_FALSE(FromCivil(c));
}

TEST(CivilTimeTest, Rfc3339RoundTripsAndRefusesOtherForms) {
  const TimePoint t = At(1764442427, 120'000);
  EXPECT_EQ(Rfc3339(t), "2025-11-29T18:53:47.120Z");
  EXPECT_EQ(ParseRfc3339(Rfc3339(t)), t);
  EXPECT_EQ(ParseRfc3339("2025-11-29T18:53:47Z"), At(1764442427));
  EXPECT_EQ(ParseRfc3339("2025-11-29T18:53:47.1234567Z"), At(1764442427, 123456));
  for (const char* bad : {"", "2025-11-29 18:53:47Z", "2025-11-29T18:53:47", "2025-02-30T00:00:00Z",
                          "2025-11-29T18:53:47.Z", "2025-11-29T18:53:47.1aZ",
                          "2025-11-29T25:00:00Z", "+025-11-29T18:53:47Z"}) {
    EXPECT_FALSE(ParseRfc3339(bad)) << bad;
  }
}

TEST(CivilTimeTest, SecondsForTables) {
  EXPECT_EQ(FormatUtcSeconds(At(1764442427, 999'999)), "2025-11-29 18:53:47");
  EXPECT_EQ(ParseUtcSeconds("2025-11-29 18:53:47"), At(1764442427));
  EXPECT_FALSE(ParseUtcSeconds("2025-11-29T18:53:47"));
  EXPECT_FALSE(ParseUtcSeconds("2025-11-31 18:53:47"));
  EXPECT_FALSE(ParseUtcSeconds("2025-11-29 18:53:4x"));
}

TEST(HexTest, TwoLowercaseDigitsAByte) {
  EXPECT_EQ(Hex(std::string("\x00\x0f\xa5\xff", 4)), "000fa5ff");
  std::string out = "id.";
  AppendHex(out, "AB");
  EXPECT_EQ(out, "id.4142");
}

}  // namespace
}  // namespace gleaner::core
