// What only the SQLite store does: a file in WAL mode, its errors, and
// OpenStore's choice of it. What every backend does is in the conformance
// suites (observation_store_test.cc, job_store_test.cc, token_store_test.cc).
#include "store/sqlite_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "store/job_json.h"
#include "store/open_store.h"
#include "store/sqlite_schema.h"
#include "store/sqlite_statement.h"
#include "store_test_data.h"
#include "testing/temp_dir.h"

namespace gleaner::store {
namespace {

using ::testing::HasSubstr;

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

// A database from before GPU claims (version 5) with jobs on GPUs: the
// upgrade claims the GPUs of those still running or vacating, so no start
// can take them; where two jobs held one GPU, the lower id keeps it.
TEST(SqliteStoreUpgradeTest, JobsOnGpusClaimThemWhenTheSchemaIsUpgraded) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "gleaner.db").string();
  sched::JobSpec spec;
  spec.command = {"sleep", "30"};
  const std::string json = sched::JobSpecToJson(spec).dump();
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    core::Status s = sqlite::MigrateSchema(db, 5);
    if (s.ok()) {
      s = sqlite::Exec(db, ("INSERT INTO jobs (user, uid, spec, state, submitted_us, gpus) VALUES"
                            " ('alice', 1000, '" +
                            json +
                            "', 'running', 1, 'GPU-a,GPU-b'),"
                            " ('bob', 1001, '" +
                            json +
                            "', 'vacating', 2, 'GPU-c'),"
                            " ('carol', 1002, '" +
                            json +
                            "', 'running', 3, 'GPU-b'),"
                            " ('dave', 1003, '" +
                            json +
                            "', 'queued', 4, 'GPU-d'),"
                            " ('erin', 1004, '" +
                            json + "', 'succeeded', 5, 'GPU-e')")
                               .c_str());
    }
    sqlite3_close(db);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const sched::JobId waiter = (*store)->Submit("frank", 1005, spec, kT0)->id;
  const auto start_on = [&](const char* gpu) {
    JobUpdate u;
    u.gpus = std::vector<core::GpuUuid>{core::GpuUuid(gpu)};
    return (*store)->Transition(waiter, JobState::kQueued, JobState::kRunning, u).status();
  };
  EXPECT_THAT(start_on("GPU-a").message(), HasSubstr("GPU GPU-a is already assigned to job 1"));
  EXPECT_THAT(start_on("GPU-b").message(), HasSubstr("GPU GPU-b is already assigned to job 1"));
  EXPECT_THAT(start_on("GPU-c").message(), HasSubstr("GPU GPU-c is already assigned to job 2"));
  // Job 3 shared GPU-b with job 1 before the upgrade; its end frees
  // nothing of job 1's.
  ASSERT_TRUE((*store)->Transition(3, JobState::kRunning, JobState::kSucceeded, {}).ok());
  EXPECT_THAT(start_on("GPU-b").message(), HasSubstr("GPU GPU-b is already assigned to job 1"));
  EXPECT_TRUE(start_on("GPU-d").ok());  // the queued and the ended job hold none
  ASSERT_TRUE((*store)->Transition(waiter, JobState::kRunning, JobState::kQueued, {}).ok());
  EXPECT_TRUE(start_on("GPU-e").ok());
}

// Jobs queued before the limits (version 7) count against their user and
// project once upgraded: the backfill reads each stored spec.
TEST(SqliteStoreUpgradeTest, JobsFromBeforeTheLimitsCountAgainstThem) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "gleaner.db").string();
  sched::JobSpec spec;
  spec.command = {"sleep", "30"};
  spec.project = "vision";
  const std::string json = store::StoredSpecText(spec);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    core::Status s = sqlite::MigrateSchema(db, 7);
    if (s.ok()) {
      s = sqlite::Exec(db, ("INSERT INTO jobs (user, uid, spec, state, submitted_us) VALUES"
                            " ('alice', 1000, '" +
                            json +
                            "', 'queued', 1),"
                            " ('alice', 1000, '" +
                            json + "', 'succeeded', 2)")
                               .c_str());
    }
    sqlite3_close(db);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const ActiveUsage expected{1, static_cast<int64_t>(json.size())};
  auto user = (*store)->UsageOfUser(1000, 0);
  ASSERT_TRUE(user.ok()) << user.status().ToString();
  EXPECT_EQ(user->jobs, expected.jobs);
  EXPECT_EQ(user->spec_bytes, expected.spec_bytes);
  auto project = (*store)->UsageOfProject("vision", 0);
  ASSERT_TRUE(project.ok()) << project.status().ToString();
  EXPECT_EQ(project->jobs, expected.jobs);
  EXPECT_EQ(project->spec_bytes, expected.spec_bytes);
}

// Another process (a report, sqlite3) reading the store of a daemon that
// has opened several connections to it must still see what the daemon
// writes afterwards. Closing a second descriptor of the database in the
// daemon once dropped the locks of its open connections: the reader took
// itself for the last one, deleted the write-ahead log on leaving, and the
// daemon's later commits were seen by nobody until it stopped.
int64_t MinutesReadByAnotherProcess(const std::string& path) {
  // This test binary, run again to do nothing but read.
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command = "GLEANER_TEST_READ_DB='" + path + "' '" + self +
                              "' --gtest_also_run_disabled_tests "
                              "--gtest_filter=SqliteStoreFileTest.DISABLED_"
                              "CountMinutesForAnotherProcess 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  pclose(pipe);
  const size_t at = out.find("minutes=");
  return at == std::string::npos ? -1 : std::stoll(out.substr(at + 8));
}

TEST(SqliteStoreFileTest, DISABLED_CountMinutesForAnotherProcess) {
  const char* path = std::getenv("GLEANER_TEST_READ_DB");
  ASSERT_NE(path, nullptr);
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto minutes = (*store)->RollupsBetween(core::TimePoint{}, core::TimePoint::max());
  ASSERT_TRUE(minutes.ok());
  std::printf("minutes=%zu\n", minutes->size());
}

TEST(SqliteStoreFileTest, AnotherProcessReadingNeverHidesLaterWrites) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "gleaner.db").string();
  auto sampler = SqliteStore::Open(path);
  ASSERT_TRUE(sampler.ok());
  const auto minute = [](int m) {
    observe::MinuteRollup r;
    r.uuid = core::GpuUuid("GPU-0");
    r.minute = core::FromUnixMicros(int64_t{60'000'000} * m);
    r.samples = 1;
    r.observed = core::Seconds(60);
    return r;
  };
  ASSERT_TRUE((*sampler)->AddRollups({minute(1)}).ok());
  auto api = SqliteStore::Open(path);  // the daemon's next connection
  ASSERT_TRUE(api.ok());
  EXPECT_EQ(MinutesReadByAnotherProcess(path), 1);
  ASSERT_TRUE((*sampler)->AddRollups({minute(2)}).ok());
  EXPECT_EQ(MinutesReadByAnotherProcess(path), 2);
  EXPECT_TRUE(std::filesystem::exists(path + "-wal"));  // still the daemon's
}

TEST(OpenStoreTest, AnythingButAPostgresUriIsASqliteFile) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "gleaner.db").string();
  auto store = OpenStore(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_NE(dynamic_cast<SqliteStore*>(store->get()), nullptr);
  EXPECT_TRUE(std::filesystem::exists(path));
  ASSERT_TRUE(OpenStore(":memory:").ok());
  EXPECT_THAT(OpenStore("/nonexistent/dir/gleaner.db").status().message(),
              HasSubstr("cannot open the database /nonexistent/dir/gleaner.db"));
  EXPECT_TRUE(IsPostgresUri("postgresql://db/gleaner"));
  EXPECT_TRUE(IsPostgresUri("postgres://db/gleaner"));
  EXPECT_FALSE(IsPostgresUri("postgresql.db"));
  EXPECT_FALSE(IsPostgresUri("/var/lib/gleaner/postgres://x"));
}

}  // namespace
}  // namespace gleaner::store

namespace gleaner::store {
namespace {

// What `gleaner doctor` reads: the version, with nothing changed.
TEST(ProbeStoreTest, ASqliteFileIsReadWithoutBeingMigrated) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "gleaner.db").string();
  EXPECT_EQ(ProbeStore(path).status().code(), core::StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(path));
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_TRUE(sqlite::MigrateSchema(db, 2).ok());
    sqlite3_close(db);
  }
  auto probe = ProbeStore(path);
  ASSERT_TRUE(probe.ok()) << probe.status().ToString();
  EXPECT_EQ(probe->schema_version, 2);
  EXPECT_EQ(probe->latest_version, sqlite::LatestSchemaVersion());
  EXPECT_FALSE(probe->clock_offset.has_value());
  EXPECT_EQ(ProbeStore(path)->schema_version, 2);  // still

  const std::string junk = dir.Write("junk.db", std::string(4096, 'x'));
  EXPECT_THAT(ProbeStore(junk).status().message(), HasSubstr("cannot read " + junk));
  std::filesystem::create_symlink(path, dir.path() / "link.db");
  EXPECT_THAT(ProbeStore((dir.path() / "link.db").string()).status().message(),
              HasSubstr("is not a plain file"));
}

}  // namespace
}  // namespace gleaner::store
