// Files the root daemon writes in directories others may reach: a link or
// a file planted there is never written through.
#include "core/private_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "testing/temp_dir.h"

namespace gleaner::core {
namespace {

TEST(PrivateFileTest, CreateRefusesAFileAlreadyThereAndLeavesItAlone) {
  testing::TempDir dir;
  const std::string planted = dir.Write("gleaner.toml.new", "someone else's");
  const Status s = CreatePrivateFile(planted, "[rules]\n");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(testing::Slurp(planted), "someone else's");
  const std::string fresh = (dir.path() / "fresh").string();
  ASSERT_TRUE(CreatePrivateFile(fresh, "text", 0640).ok());
  EXPECT_EQ(testing::Slurp(fresh), "text");
  EXPECT_EQ(std::filesystem::status(fresh).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                std::filesystem::perms::group_read);
}

TEST(PrivateFileTest, NeitherWriteFollowsALink) {
  testing::TempDir dir;
  const std::string target = dir.Write("target", "kept");
  const std::string link = (dir.path() / "link").string();
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  EXPECT_FALSE(WritePrivateFile(link, "x").ok());
  EXPECT_FALSE(CreatePrivateFile(link, "x").ok());
  EXPECT_EQ(testing::Slurp(target), "kept");
}

}  // namespace
}  // namespace gleaner::core
