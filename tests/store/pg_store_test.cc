// What only the PostgreSQL store does: connection strings and their errors,
// versioned migrations that many processes may race to apply, all-or-nothing
// submits, lost connections, and text PostgreSQL cannot hold.
// What every backend does is in the conformance suites.
#include "store/pg_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>
#include <tuple>

#include "pg_backend.h"
#include "store/open_store.h"
#include "store/pg_connection.h"
#include "store/pg_schema.h"
#include "store_test_data.h"

namespace gleaner::store {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Nothing listens on port 1 of the loopback: connections are refused at once.
constexpr const char* kNoServer = "postgresql://alice:s3cret@127.0.0.1:1/gleaner";

TEST(PgStoreErrorsTest, AServerThatIsNotThereIsNamedWithoutThePassword) {
  auto store = PgStore::Open(kNoServer);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), core::StatusCode::kUnavailable);
  EXPECT_THAT(store.status().message(),
              HasSubstr("cannot connect to PostgreSQL at host=127.0.0.1 port=1 dbname=gleaner "
                        "user=alice: "));
  EXPECT_THAT(store.status().message(), HasSubstr("refused"));
  EXPECT_THAT(store.status().message(), Not(HasSubstr("s3cret")));
}

TEST(PgStoreErrorsTest, AMalformedConnectionStringIsNamedAsSuch) {
  auto uri = PgStore::Open("postgresql://db.example/gleaner?no_such_option=1");
  ASSERT_FALSE(uri.ok());
  EXPECT_EQ(uri.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_THAT(uri.status().message(), HasSubstr("connection string is malformed"));
  EXPECT_THAT(uri.status().message(), HasSubstr("no_such_option"));
  auto keywords = PgStore::Open("host=db.example password=s3cret dbname");
  ASSERT_FALSE(keywords.ok());
  EXPECT_EQ(keywords.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_THAT(keywords.status().message(), Not(HasSubstr("s3cret")));
}

TEST(PgStoreErrorsTest, OpenStoreTakesPostgresUrisToPostgres) {
  auto store = OpenStore(kNoServer);
  ASSERT_FALSE(store.ok());
  if (PostgresSupported()) {
    EXPECT_THAT(store.status().message(), HasSubstr("cannot connect to PostgreSQL at"));
  } else {
    EXPECT_EQ(store.status().code(), core::StatusCode::kNotSupported);
    EXPECT_THAT(store.status().message(), HasSubstr("built without PostgreSQL support"));
  }
  EXPECT_THAT(OpenStore("postgres://127.0.0.1:1/gleaner").status().message(),
              HasSubstr("PostgreSQL"));
}

TEST(PgStoreTextTest, WhatPostgresCannotHoldBecomesReplacementCharacters) {
  const std::string replacement = "\xEF\xBF\xBD";
  EXPECT_EQ(pg::StorableText("plain ascii"), "plain ascii");
  const std::string valid = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";  // é € 😀
  EXPECT_EQ(pg::StorableText(valid), valid);
  EXPECT_EQ(pg::StorableText(std::string("a\0b", 3)), "a" + replacement + "b");
  EXPECT_EQ(pg::StorableText("latin1 caf\xE9"), "latin1 caf" + replacement);
  EXPECT_EQ(pg::StorableText("\xC0\xAF"), replacement + replacement);  // overlong "/"
  EXPECT_EQ(pg::StorableText("\xED\xA0\x80"),
            replacement + replacement + replacement);  // surrogate
  EXPECT_EQ(pg::StorableText("cut \xE2\x82"), "cut " + replacement + replacement);
}

// The tests below need the throwaway server.
class PgStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = TestServerUnavailable()) GTEST_SKIP() << *why;
    auto uri = NewTestDatabase();
    ASSERT_TRUE(uri.ok()) << uri.status().ToString();
    uri_ = *uri;
  }
  // A plain connection, to look at and change the database behind the
  // store's back.
  pg::Connection Admin() {
    auto admin = pg::Connection::Open(uri_);
    EXPECT_TRUE(admin.ok()) << admin.status().ToString();
    return std::move(admin).value();
  }
  std::unique_ptr<PgStore> OpenStore() {
    auto store = PgStore::Open(uri_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  std::string uri_;
};

TEST_F(PgStoreTest, AnUnknownDatabaseIsNamed) {
  const std::string uri = uri_.substr(0, uri_.find('?')) + "_missing" + uri_.substr(uri_.find('?'));
  auto store = PgStore::Open(uri);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr("cannot connect to PostgreSQL at host="));
  EXPECT_THAT(store.status().message(), HasSubstr("_missing\" does not exist"));
}

TEST_F(PgStoreTest, OpenStoreOpensAPgStore) {
  auto store = store::OpenStore(uri_);
  if (!PostgresSupported()) {
    EXPECT_THAT(store.status().message(), HasSubstr("built without PostgreSQL support"));
    return;
  }
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_NE(dynamic_cast<PgStore*>(store->get()), nullptr);
}

// Eight processes open one new database at the same moment. Each must find
// it ready, and each migration must have run exactly once: without the
// advisory lock, two would create the same table and one would fail.
TEST_F(PgStoreTest, ProcessesOpeningANewDatabaseAtOnceMigrateItOnce) {
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(go[1]);
      char byte;
      if (read(go[0], &byte, 1) != 0) _exit(2);  // returns 0 when the parent lets go
      auto store = PgStore::Open(uri_);
      _exit(store.ok() && (*store)->List({}).ok() ? 0 : 1);
    }
    children.push_back(pid);
  }
  close(go[0]);
  close(go[1]);  // all start now
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  pg::Connection admin = Admin();
  auto versions = admin.Query("SELECT version FROM gleaner_schema ORDER BY version", {}, "reading");
  ASSERT_TRUE(versions.ok()) << versions.status().ToString();
  ASSERT_EQ(versions->size(), pg::LatestSchemaVersion());
  for (int i = 0; i < versions->size(); ++i) EXPECT_EQ(versions->Int(i, 0), i + 1);
}

// What `gleaner doctor` reads: the version and the server's clock, with
// nothing changed.
TEST_F(PgStoreTest, AProbeReadsTheSchemaVersionAndClockWithoutMigrating) {
  auto probe = ProbeStore(uri_);
  ASSERT_TRUE(probe.ok()) << probe.status().ToString();
  EXPECT_EQ(probe->schema_version, 0);
  EXPECT_EQ(probe->latest_version, pg::LatestSchemaVersion());
  ASSERT_TRUE(probe->clock_offset.has_value());
  EXPECT_LT(std::chrono::abs(*probe->clock_offset), std::chrono::seconds(1));  // one host
  EXPECT_EQ(ProbeStore(uri_)->schema_version, 0);                              // still not made
  ASSERT_NE(OpenStore(), nullptr);
  EXPECT_EQ(ProbeStore(uri_)->schema_version, pg::LatestSchemaVersion());
  const std::string missing =
      uri_.substr(0, uri_.find('?')) + "_missing" + uri_.substr(uri_.find('?'));
  EXPECT_THAT(ProbeStore(missing).status().message(), HasSubstr("_missing\" does not exist"));
}

TEST_F(PgStoreTest, ADatabaseNewerThanThisGleanerIsRefused) {
  ASSERT_NE(OpenStore(), nullptr);
  pg::Connection admin = Admin();
  ASSERT_TRUE(admin
                  .Query("INSERT INTO gleaner_schema (version) VALUES ($1)",
                         {pg::LatestSchemaVersion() + 1}, "pretending to be newer")
                  .ok());
  auto store = PgStore::Open(uri_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("newer than this gleaner understands"));
}

// A database from before GPU claims (version 3) with jobs on GPUs: the
// upgrade claims the GPUs of those still running or vacating, so no start
// can take them; where two jobs held one GPU, the lower id keeps it.
TEST_F(PgStoreTest, JobsOnGpusClaimThemWhenTheSchemaIsUpgraded) {
  pg::Connection admin = Admin();
  ASSERT_TRUE(pg::MigrateSchema(admin, 3).ok());
  sched::JobSpec spec;
  spec.command = {"sleep", "30"};
  const std::string json = sched::JobSpecToJson(spec).dump();
  for (const auto& [user, state, gpus] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"alice", "running", "GPU-a,GPU-b"},
           {"bob", "vacating", "GPU-c"},
           {"carol", "running", "GPU-b"},
           {"dave", "queued", "GPU-d"},
           {"erin", "succeeded", "GPU-e"}}) {
    ASSERT_TRUE(admin
                    .Query("INSERT INTO jobs (user_name, uid, spec, state, submitted_us, gpus)"
                           " VALUES ($1, 1000, $2, $3, 1, $4)",
                           {user, json, state, gpus}, "saving an old job")
                    .ok());
  }
  std::unique_ptr<PgStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const sched::JobId waiter = store->Submit("frank", 1005, spec, kT0)->id;
  const auto start_on = [&](const char* gpu) {
    JobUpdate u;
    u.gpus = std::vector<core::GpuUuid>{core::GpuUuid(gpu)};
    return store->Transition(waiter, JobState::kQueued, JobState::kRunning, u).status();
  };
  EXPECT_THAT(start_on("GPU-a").message(), HasSubstr("GPU GPU-a is already assigned to job 1"));
  EXPECT_THAT(start_on("GPU-b").message(), HasSubstr("GPU GPU-b is already assigned to job 1"));
  EXPECT_THAT(start_on("GPU-c").message(), HasSubstr("GPU GPU-c is already assigned to job 2"));
  // Job 3 shared GPU-b with job 1 before the upgrade; its end frees
  // nothing of job 1's.
  ASSERT_TRUE(store->Transition(3, JobState::kRunning, JobState::kSucceeded, {}).ok());
  EXPECT_THAT(start_on("GPU-b").message(), HasSubstr("GPU GPU-b is already assigned to job 1"));
  EXPECT_TRUE(start_on("GPU-d").ok());  // the queued and the ended job hold none
  ASSERT_TRUE(store->Transition(waiter, JobState::kRunning, JobState::kQueued, {}).ok());
  EXPECT_TRUE(start_on("GPU-e").ok());
}

// A submit is one transaction: when the database refuses one job of a
// batch, no job of it is stored.
TEST_F(PgStoreTest, SubmitAllStoresAllOrNothing) {
  std::unique_ptr<PgStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  pg::Connection admin = Admin();
  ASSERT_TRUE(admin
                  .Script(R"sql(
    CREATE FUNCTION refuse_mallory() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.user_name = 'mallory' THEN RAISE EXCEPTION 'mallory may not submit'; END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER refuse_mallory BEFORE INSERT ON jobs
      FOR EACH ROW EXECUTE FUNCTION refuse_mallory();)sql",
                          "installing the trigger")
                  .ok());
  sched::JobSpec spec;
  spec.command = {"true"};
  auto saved = store->SubmitAll(
      {{"alice", 1000, spec, ""}, {"bob", 1001, spec, ""}, {"mallory", 1002, spec, ""}}, kT0);
  ASSERT_FALSE(saved.ok());
  EXPECT_THAT(saved.status().message(), HasSubstr("mallory may not submit"));
  EXPECT_TRUE(store->List({})->empty());
  // The store carries on: the failed transaction is over.
  EXPECT_TRUE(store->Submit("alice", 1000, spec, kT0).ok());
  EXPECT_EQ(store->List({})->size(), 1u);
}

// The server drops the store's connection (a restart, a failover): the call
// that finds out fails, and the next one connects again.
TEST_F(PgStoreTest, ALostConnectionIsOpenedAgain) {
  std::unique_ptr<PgStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Submit("alice", 1000, sched::JobSpec{}, kT0).ok());
  pg::Connection admin = Admin();
  auto killed = admin.Query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
      " WHERE datname = current_database() AND pid <> pg_backend_pid()",
      {}, "dropping the store's connection");
  ASSERT_TRUE(killed.ok()) << killed.status().ToString();
  ASSERT_EQ(killed->size(), 1);
  // Wait for the server to have dropped it, so the next call cannot slip in.
  for (int i = 0; i < 500; ++i) {
    auto left = admin.Query(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()",
        {}, "counting connections");
    ASSERT_TRUE(left.ok()) << left.status().ToString();
    if (left->Int(0, 0) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto lost = store->List({});
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().code(), core::StatusCode::kUnavailable);
  auto again = store->List({});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->size(), 1u);
}

// Text a user or a process can put in a job (a user name, a reason quoting
// a command line) that is not UTF-8 is stored, not refused.
TEST_F(PgStoreTest, TextThatIsNotUtf8IsStored) {
  std::unique_ptr<PgStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto job = store->Submit("caf\xE9", 1000, sched::JobSpec{}, kT0);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  JobUpdate start;
  start.reason = std::string("owner ran \0\xFF", 12);
  ASSERT_TRUE(store->Transition(job->id, JobState::kQueued, JobState::kRunning, start).ok());
  auto stored = store->Get(job->id);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->user, "caf\xEF\xBF\xBD");
  EXPECT_EQ(stored->reason, "owner ran \xEF\xBF\xBD\xEF\xBF\xBD");
}

// An acknowledged write must be on the server's disk even where the
// database is set to acknowledge early.
TEST_F(PgStoreTest, CommitsAreDurableEvenWhereTheDatabaseSaysOtherwise) {
  pg::Connection admin = Admin();
  ASSERT_TRUE(admin
                  .Script(R"sql(
    DO $$ BEGIN
      EXECUTE format('ALTER DATABASE %I SET synchronous_commit = off', current_database());
    END $$)sql",
                          "turning durability off")
                  .ok());
  auto fresh = pg::Connection::Open(uri_);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  auto setting = fresh->Query("SHOW synchronous_commit", {}, "reading");
  ASSERT_TRUE(setting.ok()) << setting.status().ToString();
  EXPECT_EQ(setting->Text(0, 0), "on");
}

}  // namespace
}  // namespace gleaner::store
