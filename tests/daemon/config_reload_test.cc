// ConfigReload compares the file with the text the daemon started from,
// not with whatever the file held when the reload was set up.
#include "daemon/config_reload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "daemon/daemon_start.h"
#include "testing/temp_dir.h"

namespace gleaner::daemon {
namespace {

using ::testing::HasSubstr;

TEST(ConfigReloadTest, AChangeMadeBeforeTheReloadWasSetUpIsStillTakenUp) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "gleaner.toml").string();
  std::ofstream(path) << "[idle]\nidle_after_s = 300\n";
  std::string started_from;
  auto config = LoadDaemonConfig(path, true, std::nullopt, &started_from);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(started_from, "[idle]\nidle_after_s = 300\n");
  // The file changes after the daemon read it, before its reload is ready.
  std::ofstream(path) << "[idle]\nidle_after_s = 600\n";
  ConfigReload reload(path, started_from, {"idle"});
  std::vector<std::string> said;
  const auto next = reload.Reload([&](const std::string& m) { said.push_back(m); });
  ASSERT_TRUE(next.has_value()) << (said.empty() ? "" : said.back());
  EXPECT_EQ(next->idle.idle_after, core::Seconds(600));
  EXPECT_FALSE(reload.Reload([&](const std::string& m) { said.push_back(m); }));
  EXPECT_THAT(said.back(), HasSubstr("unchanged"));
}

TEST(ConfigReloadTest, NoFileStartsFromNothingAndAFileMadeLaterIsTakenUp) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "gleaner.toml").string();
  std::string started_from = "not read";
  ASSERT_TRUE(LoadDaemonConfig(path, false, std::nullopt, &started_from).ok());
  EXPECT_EQ(started_from, "");
  EXPECT_FALSE(LoadDaemonConfig(path, true, std::nullopt).ok());  // named by --config: must exist
  std::ofstream(path) << "[idle]\nidle_after_s = 120\n";
  ConfigReload reload(path, started_from, {"idle"});
  const auto next = reload.Reload([](const std::string&) {});
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->idle.idle_after, core::Seconds(120));
}

// A coordinator reconfigured on every SIGHUP restarted its scheduler for a
// [store] change it cannot take up live.
TEST(ConfigReloadTest, OnlySectionsTakenUpLiveReconfigure) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "gleaner.toml").string();
  const std::string started_from = "[idle]\nidle_after_s = 300\n";
  std::ofstream(path) << started_from;
  ConfigReload reload(path, started_from, {"idle"});
  std::vector<std::string> said;
  const auto log = [&](const std::string& m) { said.push_back(m); };

  std::ofstream(path) << "# a comment\n" << started_from;
  EXPECT_FALSE(reload.Reload(log).has_value());
  EXPECT_THAT(said.back(), HasSubstr("nothing in [idle] changed"));

  std::ofstream(path) << started_from << "[cost]\ncurrency = \"CNY\"\n";
  EXPECT_FALSE(reload.Reload(log).has_value());
  EXPECT_THAT(said.back(), HasSubstr("[cost] changed and take effect at the next restart"));

  std::ofstream(path) << "[idle]\nidle_after_s = 900\n[cost]\ncurrency = \"CNY\"\n";
  const auto next = reload.Reload(log);
  ASSERT_TRUE(next.has_value()) << said.back();
  EXPECT_EQ(next->idle.idle_after, core::Seconds(900));
  EXPECT_THAT(said.back(), HasSubstr("[idle] in effect"));
}

}  // namespace
}  // namespace gleaner::daemon
