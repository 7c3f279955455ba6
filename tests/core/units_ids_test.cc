#include <gtest/gtest.h>

#include <sstream>
#include <type_traits>
#include <unordered_set>

#include "core/format.h"
#include "core/ids.h"
#include "core/units.h"

namespace gleaner::core {
namespace {

TEST(BytesTest, UnitsAndArithmetic) {
  EXPECT_EQ(Bytes::KiB(1).count(), 1024u);
  EXPECT_EQ(Bytes::MiB(3).count(), 3u << 20);
  EXPECT_EQ(Bytes::GiB(80).count(), uint64_t{80} << 30);
  EXPECT_DOUBLE_EQ(Bytes::MiB(1536).ToGiB(), 1.5);
  EXPECT_DOUBLE_EQ(Bytes::KiB(512).ToMiB(), 0.5);
  EXPECT_EQ(Bytes::MiB(1) + Bytes::MiB(1), Bytes::MiB(2));
  EXPECT_LT(Bytes::MiB(1), Bytes::GiB(1));
}

TEST(BytesTest, SubtractionSaturatesAtZero) {
  EXPECT_EQ(Bytes(5) - Bytes(7), Bytes(0));
  EXPECT_EQ(Bytes(7) - Bytes(5), Bytes(2));
}

TEST(OneLineTest, ControlCharactersAreWrittenOutAndTextIsKept) {
  EXPECT_EQ(OneLine("plain words, üñí 日本"), "plain words, üñí 日本");
  EXPECT_EQ(OneLine("a\nb\r\tc"), "a\\x0ab\\x0d\\x09c");
  EXPECT_EQ(OneLine("\x1b[31mred\x7f"), "\\x1b[31mred\\x7f");
  // A backslash is doubled, so "\\x0a" typed by a user is told from a newline.
  EXPECT_EQ(OneLine("\\x0a"), "\\\\x0a");
  EXPECT_EQ(OneLine(std::string_view("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(OneLine("\xc2\x9b"
                    "2J \xc2\xa9"),
            "\\xc2\\x9b2J \xc2\xa9");  // a C1 control; (c) kept
}

TEST(NumberFormatTest, FixedAndPercentRoundAsPrintfDoes) {
  EXPECT_EQ(FormatFixed(3.14159, 2), "3.14");
  EXPECT_EQ(FormatFixed(2.5, 0), "2");  // halves to even
  EXPECT_EQ(FormatFixed(-0.25), "-0.2");
  EXPECT_EQ(FormatPercent(37.4), "37%");
  EXPECT_EQ(FormatPercent(0.5), "0%");
  EXPECT_EQ(FormatPercent(1.5), "2%");
  EXPECT_EQ(FormatPercent(-3), "-3%");
  EXPECT_EQ(FormatPercent(12.25, 1), "12.2%");
  EXPECT_EQ(FormatPercent(1e300), FormatFixed(1e300, 0) + "%");
}

TEST(BytesTest, ParsesSizesPeopleWrite) {
  EXPECT_EQ(*ParseBytes("20GiB"), Bytes::GiB(20));
  EXPECT_EQ(*ParseBytes("20G"), Bytes::GiB(20));
  EXPECT_EQ(*ParseBytes("20 gib"), Bytes::GiB(20));
  EXPECT_EQ(*ParseBytes("512MiB"), Bytes::MiB(512));
  EXPECT_EQ(*ParseBytes("1.5T"), Bytes::GiB(1536));
  EXPECT_EQ(*ParseBytes("4096"), Bytes(4096));
  for (const char* bad :
       {"", "GiB", "20GB!", "-1G", "1e3G", "20 parsecs", "1.2.3G", "99999999999999999999T"}) {
    auto r = ParseBytes(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("size"), std::string::npos) << r.status().message();
  }
}

TEST(StrongIdTest, ComparesHashesAndPrints) {
  GpuUuid a("GPU-aaaa");
  GpuUuid b("GPU-bbbb");
  EXPECT_NE(a, b);
  EXPECT_LT(a, b);
  EXPECT_EQ(a, GpuUuid("GPU-aaaa"));
  EXPECT_TRUE(GpuUuid().empty());
  std::unordered_set<GpuUuid> set{a, b, GpuUuid("GPU-aaaa")};
  EXPECT_EQ(set.size(), 2u);
  std::ostringstream os;
  os << a;
  EXPECT_EQ(os.str(), "GPU-aaaa");
}

TEST(StrongIdTest, KindsDoNotMix) {
  static_assert(!std::is_convertible_v<GpuUuid, NodeId>);
  static_assert(!std::is_convertible_v<std::string, GpuUuid>);  // explicit only
  EXPECT_EQ(NodeId("gpu-host-1").str(), "gpu-host-1");
}

}  // namespace
}  // namespace gleaner::core
