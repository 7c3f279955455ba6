#include "slurm/hostlist.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gleaner::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(HostlistTest, ExpandsRangesKeepingZerosPrefixesAndSuffixes) {
  auto names = ExpandHostlist("gpu[01-03,07],login1,rack[1-2]-ib");
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_THAT(*names,
              ElementsAre("gpu01", "gpu02", "gpu03", "gpu07", "login1", "rack1-ib", "rack2-ib"));
  EXPECT_THAT(*ExpandHostlist("vm"), ElementsAre("vm"));
  EXPECT_TRUE(ExpandHostlist("")->empty());
  EXPECT_THAT(*ExpandHostlist("n[1-2]x[1-2]"), ElementsAre("n1x1", "n1x2", "n2x1", "n2x2"));
}

TEST(HostlistTest, RefusesWhatIsNotAHostList) {
  for (const char* bad : {"gpu[01-03", "gpu]1", "gpu[3-1]", "gpu[a-b]", "gpu[1-]"}) {
    auto names = ExpandHostlist(bad);
    EXPECT_FALSE(names.ok()) << bad;
    EXPECT_THAT(names.status().message(), HasSubstr("Slurm host list")) << bad;
  }
  // A list that would expand past the limit is refused before it is built.
  auto huge = ExpandHostlist("n[0-99999999999]");
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(huge.status().message(), HasSubstr("more than"));
  EXPECT_FALSE(ExpandHostlist("n[0-999]x[0-999]", 1000).ok());
}

TEST(GresDetailTest, ReadsTheGpuIndicesOfEachForm) {
  EXPECT_THAT(*ParseGresIndices("gpu:2(IDX:0-1)"), ElementsAre(0u, 1u));
  EXPECT_THAT(*ParseGresIndices("gpu:a100:2(IDX:0,2)"), ElementsAre(0u, 2u));
  EXPECT_THAT(*ParseGresIndices("gpu:a100:1(IDX:3),gpu:v100:2(IDX:5-6)"), ElementsAre(3u, 5u, 6u));
  EXPECT_THAT(*ParseGresIndices("mps:100(IDX:0),gpu:1(IDX:1)"), ElementsAre(1u));
  EXPECT_TRUE(ParseGresIndices("gpu:1(IDX:N/A)")->empty());
  EXPECT_TRUE(ParseGresIndices("")->empty());
  EXPECT_TRUE(ParseGresIndices("gpu(CNT:2)")->empty());
}

TEST(GresDetailTest, RefusesIndexListsItCannotRead) {
  EXPECT_FALSE(ParseGresIndices("gpu:2(IDX:0-1").ok());
  EXPECT_FALSE(ParseGresIndices("gpu:2(IDX:x)").ok());
  EXPECT_FALSE(ParseGresIndices("gpu:1(IDX:99999999)").ok());
}

}  // namespace
}  // namespace gleaner::slurm
