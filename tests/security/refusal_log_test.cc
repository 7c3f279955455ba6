// Refused joins and reports, from a client that tries again and again:
// before, each was a log line (a flood could fill the disk under the
// log), and a refused report was not logged at all.
#include "server/refusal_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gleaner::server {
namespace {

using ::testing::HasSubstr;

TEST(RefusalLogTest, AFloodIsOneLineAMinuteWithItsCount) {
  core::ManualClock clock(core::FromUnixMicros(1'800'000'000'000'000));
  std::vector<std::string> lines;
  RefusalLog refusals(clock, [&](const std::string& line) { lines.push_back(line); });
  for (int i = 0; i < 1000; ++i) {
    refusals.Note("join", "refused a join as h" + std::to_string(i) + ": spent token");
    clock.Advance(core::Duration(std::chrono::milliseconds(10)));
  }
  refusals.Note("report", "refused an agent's report: \x1b[2Jstale credential");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "refused a join as h0: spent token");
  EXPECT_THAT(lines[1], HasSubstr("\\x1b[2J")) << "what an agent sent is escaped";
  clock.Advance(RefusalLog::kWindow);
  refusals.Note("join", "refused a join as h1000: spent token");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[2], HasSubstr("refused a join as h1000: spent token (and 999 more join "
                                  "refusals in the"));
}

}  // namespace
}  // namespace gleaner::server
