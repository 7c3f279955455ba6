// What only the SQLite store does: a file in WAL mode, its errors, and
// OpenStore's choice of it. What every backend does is in the conformance
// suites (observation_store_test.cc, job_store_test.cc, token_store_test.cc).
#include "store/sqlite_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/open_store.h"
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
