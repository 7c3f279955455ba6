// The SQLite store, in memory and in a real file on disk.
#include "store/sqlite_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing/temp_dir.h"

namespace gleaner::store {
namespace {

using ::testing::HasSubstr;

const core::TimePoint kT0 = core::FromUnixMicros(int64_t{1'764'000'000} * 1'000'000);

observe::MinuteRollup Rollup(const char* uuid, int minute) {
  observe::MinuteRollup r;
  r.uuid = core::GpuUuid(uuid);
  r.minute = kT0 + core::Seconds(60 * minute);
  r.samples = 60;
  r.utilization_min_pct = 1;
  r.utilization_mean_pct = 40.5;
  r.utilization_max_pct = 99;
  r.memory_used_max = core::Bytes::GiB(12);
  r.power_mean_w = 321.5;
  r.pids = {7, 42};
  r.users = {"alice", "bob"};
  r.state = observe::GpuState::kHeldIdle;
  r.observed = core::Seconds(60);
  r.busy = core::Seconds(45);
  r.idle = core::Seconds(15);
  r.held_idle = core::Seconds(5);
  r.harvested = core::Seconds(10);
  r.job_users = {"carol"};
  return r;
}

class SqliteStoreTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    path_ = GetParam() ? (dir_.path() / "gleaner.db").string() : ":memory:";
    auto s = SqliteStore::Open(path_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_P(SqliteStoreTest, RollupsRoundTripAndMergeARestartedMinute) {
  ASSERT_TRUE(
      store_->AddRollups({Rollup("GPU-a", 0), Rollup("GPU-a", 1), Rollup("GPU-b", 0)}).ok());
  observe::MinuteRollup second_part = Rollup("GPU-a", 1);
  second_part.samples = 20;
  second_part.utilization_mean_pct = 0.5;
  second_part.utilization_min_pct = 0;
  second_part.memory_used_max.reset();
  second_part.power_mean_w.reset();
  second_part.users = {"carol"};
  second_part.state = observe::GpuState::kIdle;
  ASSERT_TRUE(store_->AddRollups({second_part}).ok());
  auto rows = store_->Rollups(core::GpuUuid("GPU-a"), kT0, kT0 + core::Seconds(3600));
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0], Rollup("GPU-a", 0));
  const observe::MinuteRollup& m = (*rows)[1];
  EXPECT_EQ(m.samples, 80);
  EXPECT_DOUBLE_EQ(m.utilization_mean_pct, (40.5 * 60 + 0.5 * 20) / 80);
  EXPECT_DOUBLE_EQ(m.utilization_min_pct, 0);
  EXPECT_DOUBLE_EQ(m.utilization_max_pct, 99);
  EXPECT_EQ(m.memory_used_max, core::Bytes::GiB(12));
  EXPECT_EQ(m.users, (std::set<std::string>{"alice", "bob", "carol"}));
  EXPECT_EQ(m.state, observe::GpuState::kIdle);
  EXPECT_EQ(m.observed, core::Seconds(120));
  EXPECT_EQ(
      store_->Rollups(core::GpuUuid("GPU-a"), kT0 + core::Seconds(60), kT0 + core::Seconds(61))
          ->size(),
      1u);
}

TEST_P(SqliteStoreTest, PruneDropsOldMinutesOnly) {
  ASSERT_TRUE(
      store_->AddRollups({Rollup("GPU-a", 0), Rollup("GPU-a", 10), Rollup("GPU-a", 20)}).ok());
  auto pruned = store_->PruneRollups(kT0 + core::Seconds(60 * 10));
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(*pruned, 1);
  EXPECT_EQ(store_->Rollups(core::GpuUuid("GPU-a"), kT0, kT0 + core::Seconds(3600))->size(), 2u);
}

TEST_P(SqliteStoreTest, RollupsBetweenSpansEveryGpu) {
  ASSERT_TRUE(store_->AddRollups({Rollup("GPU-b", 0), Rollup("GPU-a", 1), Rollup("GPU-a", 0),
                                  Rollup("GPU-a", 5)})
                  .ok());
  auto rows = store_->RollupsBetween(kT0, kT0 + core::Seconds(60 * 5));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0], Rollup("GPU-a", 0));
  EXPECT_EQ((*rows)[1], Rollup("GPU-a", 1));
  EXPECT_EQ((*rows)[2], Rollup("GPU-b", 0));
}

TEST_P(SqliteStoreTest, GpusKeepWhenTheyWereFirstSeen) {
  GpuRecord g;
  g.uuid = core::GpuUuid("GPU-a");
  g.host = "node1";
  g.index = 3;
  g.name = "NVIDIA H100 80GB HBM3";
  g.memory_total = core::Bytes::GiB(80);
  g.first_seen = g.last_seen = kT0;
  GpuRecord other = g;
  other.uuid = core::GpuUuid("GPU-b");
  other.index = 0;
  other.memory_total.reset();
  ASSERT_TRUE(store_->SaveGpus({g, other}).ok());
  GpuRecord later = g;
  later.index = 1;  // renumbered after a reboot
  later.first_seen = later.last_seen = kT0 + core::Seconds(3600);
  ASSERT_TRUE(store_->SaveGpus({later}).ok());
  auto gpus = store_->Gpus();
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0], other);  // by host, then index
  GpuRecord expected = later;
  expected.first_seen = kT0;
  EXPECT_EQ((*gpus)[1], expected);
}

TEST_P(SqliteStoreTest, LatestVerdictsAreReplaced) {
  observe::Verdict v;
  v.uuid = core::GpuUuid("GPU-a");
  v.state = observe::GpuState::kIdle;
  v.since = kT0;
  v.at = kT0 + core::Seconds(5);
  v.evidence.reason = "quiet, \"quoted\"";
  v.evidence.utilization_pct = 0;
  v.evidence.confidence = 0.8;
  v.evidence.similar_pauses = 12;
  v.evidence.process_memory = core::Bytes::MiB(3);
  v.evidence.quiet_for = core::Milliseconds(301'500);
  ASSERT_TRUE(store_->SaveVerdicts({v}).ok());
  v.state = observe::GpuState::kBusy;
  ASSERT_TRUE(store_->SaveVerdicts({v}).ok());
  auto latest = store_->LatestVerdicts();
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  ASSERT_EQ(latest->size(), 1u);
  EXPECT_EQ((*latest)[0], v);
}

TEST_P(SqliteStoreTest, ProfilesAccumulate) {
  observe::UsageProfiles delta(std::map<std::string, std::string>{{"alice", "vision"}});
  delta.Add(Rollup("GPU-a", 0));
  ASSERT_TRUE(store_->AddToProfiles(delta).ok());
  ASSERT_TRUE(store_->AddToProfiles(delta).ok());
  const int hour = observe::HourOfWeek(kT0);
  auto gpus = store_->Profiles("gpu");
  ASSERT_TRUE(gpus.ok());
  EXPECT_DOUBLE_EQ(gpus->at("GPU-a").busy_s[static_cast<size_t>(hour)], 90);
  EXPECT_DOUBLE_EQ(gpus->at("GPU-a").observed_s[static_cast<size_t>(hour)], 120);
  EXPECT_DOUBLE_EQ(*gpus->at("GPU-a").Occupancy(hour), 0.75);
  EXPECT_FALSE(gpus->at("GPU-a").Occupancy((hour + 1) % 168).has_value());
  EXPECT_EQ(store_->Profiles("user")->size(), 3u);  // owners alice and bob, and carol's job
  // alice's process was on the GPU both minutes: all 120 s of GPU-time.
  EXPECT_DOUBLE_EQ(store_->Profiles("project")->at("vision").busy_s[static_cast<size_t>(hour)],
                   120);
  EXPECT_THAT(store_->Profiles("team").status().message(), HasSubstr("unknown profile kind"));
}

INSTANTIATE_TEST_SUITE_P(MemoryAndDisk, SqliteStoreTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "OnDisk" : "InMemory";
                         });

TEST(SqliteStoreFileTest, SurvivesReopenAndUsesWal) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "gleaner.db").string();
  {
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->AddRollups({Rollup("GPU-a", 0)}).ok());
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  auto s = SqliteStore::Open(path);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->Rollups(core::GpuUuid("GPU-a"), kT0, kT0 + core::Seconds(60))->size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(path + "-wal"));
}

// Processes that open a new database at the same moment (a client beside a
// starting daemon) each find it ready: none repeats another's migration or
// gives up on a lock.
TEST(SqliteStoreFileTest, ManyProcessesOpenANewDatabaseAtOnce) {
  for (int round = 0; round < 5; ++round) {
    testing::TempDir dir;
    const std::string path = (dir.path() / "gleaner.db").string();
    std::vector<pid_t> children;
    for (int i = 0; i < 4; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        auto s = SqliteStore::Open(path);
        std::_Exit(s.ok() && (*s)->List({}).ok() ? 0 : 1);
      }
      children.push_back(pid);
    }
    for (pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round;
    }
  }
}

TEST(SqliteStoreFileTest, ClearErrors) {
  auto missing = SqliteStore::Open("/nonexistent/dir/gleaner.db");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(),
              HasSubstr("cannot open the database /nonexistent/dir/gleaner.db"));
  testing::TempDir dir;
  const std::string junk = dir.Write("junk.db", std::string(4096, 'x'));
  auto not_db = SqliteStore::Open(junk);
  ASSERT_FALSE(not_db.ok());
  EXPECT_THAT(not_db.status().message(), HasSubstr("junk.db"));
}

}  // namespace
}  // namespace gleaner::store
