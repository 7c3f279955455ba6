// The data directory is where root opens files: it is refused when anyone
// but root (or gleaner's own user) could change it or a directory above it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "agent/executor.h"
#include "agent/node_agent.h"
#include "cli/daemon_support.h"
#include "config/trusted_paths.h"
#include "core/mutex.h"
#include "daemon/daemon_start.h"
#include "daemon/secrets.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"
#include "testing/throwaway_user.h"

namespace gleaner::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(DataDirTest, AWritableDataDirIsRefusedWithTheFix) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "data").string();
  ASSERT_TRUE(config::PrepareDataDir(data).ok());  // new: made private
  chmod(data.c_str(), 0777);
  auto s = config::PrepareDataDir(data);
  EXPECT_EQ(s.code(), core::StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("chmod go-w " + data));
}

TEST(DataDirTest, AWritableParentIsRefusedButASharedStickyOneIsFine) {
  testing::TempDir dir;
  const std::string parent = (dir.path() / "shared").string();
  std::filesystem::create_directory(parent);
  chmod(parent.c_str(), 0777);
  auto s = config::PrepareDataDir(parent + "/data");
  EXPECT_EQ(s.code(), core::StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("a parent of the data directory, " + parent));
  chmod(parent.c_str(), 01777);  // like /tmp: no one may replace our entries
  EXPECT_TRUE(config::PrepareDataDir(parent + "/data").ok());
}

TEST(DataDirTest, ALinkInPlaceOfTheLogsDirectoryIsRefused) {
  testing::TempDir dir;
  testing::TempDir elsewhere;
  const std::string data = (dir.path() / "data").string();
  std::filesystem::create_directory(data);
  chmod(data.c_str(), 0711);
  ASSERT_EQ(symlink(elsewhere.path().c_str(), (data + "/logs").c_str()), 0);
  auto s = config::PrepareDataDir(data);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("logs is not a directory"));
}

TEST(DataDirAsRootTest, ADirectoryAnotherUserOwnsIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to hand a directory to another user";
  testing::ThrowawayUser account("gleanerd");
  ASSERT_TRUE(account.ok());
  testing::TempDir dir;
  const std::string clone = (dir.path() / "clone").string();  // a user's checkout
  std::filesystem::create_directory(clone);
  ASSERT_EQ(chown(clone.c_str(), account.uid(), 0), 0);
  auto s = config::PrepareDataDir(clone + "/.gleaner");
  EXPECT_EQ(s.code(), core::StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("belongs to uid " + std::to_string(account.uid())));
}

// The config names who may do what as root: only those who could be root
// anyway may change it, directly or through a directory above it.
TEST(ConfigFileTest, AConfigOthersCanChangeIsRefusedWithTheFix) {
  testing::TempDir dir;
  const std::string none = (dir.path() / "none.toml").string();
  EXPECT_EQ(*config::TrustedConfigPath(none), none);  // the defaults
  const std::string config = dir.Write("gleaner.toml", "[rules]\n");
  chmod(config.c_str(), 0644);
  EXPECT_EQ(*config::TrustedConfigPath(config), config);
  chmod(config.c_str(), 0666);
  auto s = config::TrustedConfigPath(config).status();
  EXPECT_EQ(s.code(), core::StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("the config file " + config));
  EXPECT_THAT(s.message(), HasSubstr("chmod go-w " + config));
  chmod(config.c_str(), 0644);

  const std::string shared = (dir.path() / "shared").string();
  std::filesystem::create_directory(shared);
  chmod(shared.c_str(), 0777);  // anyone could put their own file in its place
  const std::string inside = dir.Write("shared/gleaner.toml", "[rules]\n");
  chmod(inside.c_str(), 0644);
  s = config::TrustedConfigPath(inside).status();
  EXPECT_EQ(s.code(), core::StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("a parent of the config file, " + shared));
  // A link to a trusted file is judged, and read from then on, where it
  // leads: whoever may swap the link cannot swap what is read.
  const std::string link = shared + "/link.toml";
  ASSERT_EQ(symlink(config.c_str(), link.c_str()), 0);
  EXPECT_EQ(*config::TrustedConfigPath(link), config);
}

TEST(ConfigFileAsRootTest, AConfigAnotherUserOwnsIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to hand a file to another user";
  testing::ThrowawayUser account("gleanercfg");
  ASSERT_TRUE(account.ok());
  testing::TempDir dir;
  const std::string config = dir.Write("gleaner.toml", "[rules]\n");
  ASSERT_EQ(chown(config.c_str(), account.uid(), 0), 0);
  auto s = config::TrustedConfigPath(config).status();
  EXPECT_EQ(s.code(), core::StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("belongs to uid " + std::to_string(account.uid())));
}

// A reason or a token's name quoted in the log stays on its line, and
// cannot send the terminal reading the log escape sequences.
TEST(DaemonLogTest, WhatUsersWroteCannotForgeALine) {
  std::ostringstream out;
  core::Mutex mu;
  const cluster::Log log = daemon::TimestampedLog(out, mu);
  log("job 3 denied by bob: ok\n2026-12-02T00:00:00Z job 4 approved by root\x1b[2J");
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_THAT(text, HasSubstr("ok\\x0a2026-12-02T00:00:00Z job 4 approved by root\\x1b[2J"));
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
}

TEST(StoreUriTest, APasswordNeverTravelsOnTheCommandLine) {
  // Every local user reads /proc/PID/cmdline; write access to the store
  // means jobs as any user on every host.
  for (const char* uri :
       {"postgresql://gleaner:hunter2@db:5432/gleaner", "postgresql://db/gleaner?password=hunter2",
        "host=db user=gleaner password=hunter2"}) {
    auto s = daemon::StoreUri(uri, "");
    EXPECT_EQ(s.status().code(), core::StatusCode::kInvalidArgument) << uri;
    EXPECT_THAT(s.status().message(), HasSubstr("--store-file")) << uri;
  }
  EXPECT_EQ(*daemon::StoreUri("postgresql://gleaner@db:5432/gleaner", ""),
            "postgresql://gleaner@db:5432/gleaner");
  testing::TempDir dir;
  const std::string file = dir.Write("store", "postgresql://gleaner:hunter2@db/gleaner\n");
  chmod(file.c_str(), 0644);
  EXPECT_THAT(daemon::StoreUri("", file).status().message(), HasSubstr("chmod 600"));
  chmod(file.c_str(), 0600);
  EXPECT_EQ(*daemon::StoreUri("", file), "postgresql://gleaner:hunter2@db/gleaner");
}

TEST(StoreFileTest, TheDatabaseAndItsJournalAreReadableByTheirOwnerOnly) {
  testing::TempDir dir;
  const std::string db = (dir.path() / "gleaner.db").string();
  {
    // As an older gleaner left it: readable by all.
    auto store = store::SqliteStore::Open(db);
    ASSERT_TRUE(store.ok());
  }
  chmod(db.c_str(), 0644);
  auto store = store::SqliteStore::Open(db);
  ASSERT_TRUE(store.ok());
  sched::JobSpec spec;
  spec.command = {"true"};
  spec.env = {{"TOKEN", "secret"}};
  ASSERT_TRUE((*store)->Submit("alice", 1000, spec, core::TimePoint{}).ok());
  for (const char* suffix : {"", "-wal", "-shm"}) {
    struct stat st {};
    ASSERT_EQ(stat((db + suffix).c_str(), &st), 0) << suffix;
    EXPECT_EQ(st.st_mode & 077, 0u) << db << suffix;
  }
  const std::string link = (dir.path() / "linked.db").string();
  ASSERT_EQ(symlink(db.c_str(), link.c_str()), 0);
  EXPECT_THAT(store::SqliteStore::Open(link).status().message(), HasSubstr("symbolic link"));
}

}  // namespace
}  // namespace gleaner::cli

namespace gleaner::cli {
namespace {

// The agent's state file is written aside and read back: a link planted at
// either name is neither written through nor read.
TEST(DataDirTest, TheAgentsStateFileIsNeverWrittenOrReadThroughALink) {
  testing::TempDir dir;
  const std::string victim = dir.Write("victim", "precious\n");
  const std::string state = (dir.path() / "agent-jobs.json").string();
  std::filesystem::create_symlink(victim, state + ".tmp");
  core::RealClock clock;
  agent::Executor executor(clock);
  std::vector<std::string> log;
  agent::NodeAgent agent(executor, clock, {dir.path().string(), state, {}},
                         [](const cluster::AgentReport&) -> core::Result<cluster::AgentReply> {
                           return core::Unavailable("no coordinator");
                         });
  agent.Recover([&](const std::string& l) { log.push_back(l); });
  EXPECT_EQ(testing::Slurp(victim), "precious\n");
  ASSERT_FALSE(log.empty());
  EXPECT_THAT(log.back(), HasSubstr("cannot write " + state + ".tmp"));

  std::filesystem::remove(state + ".tmp");
  std::filesystem::create_symlink(victim, state);
  log.clear();
  agent::NodeAgent again(executor, clock, {dir.path().string(), state, {}},
                         [](const cluster::AgentReport&) -> core::Result<cluster::AgentReply> {
                           return core::Unavailable("no coordinator");
                         });
  again.Recover([&](const std::string& l) { log.push_back(l); });
  ASSERT_FALSE(log.empty());
  EXPECT_THAT(log.front(), HasSubstr("cannot read " + state));
  EXPECT_THAT(log.front(), Not(HasSubstr("precious")));

  // A FIFO in its place does not stall the daemon, reading or writing.
  std::filesystem::remove(state);
  ASSERT_EQ(mkfifo(state.c_str(), 0600), 0);
  ASSERT_EQ(mkfifo((state + ".tmp").c_str(), 0600), 0);
  log.clear();
  agent::NodeAgent third(executor, clock, {dir.path().string(), state, {}},
                         [](const cluster::AgentReport&) -> core::Result<cluster::AgentReply> {
                           return core::Unavailable("no coordinator");
                         });
  third.Recover([&](const std::string& l) { log.push_back(l); });
  ASSERT_GE(log.size(), 2u);
  EXPECT_THAT(log.front(), HasSubstr("not a regular file"));
  EXPECT_THAT(log.back(), HasSubstr("cannot write " + state + ".tmp"));
}

}  // namespace
}  // namespace gleaner::cli
