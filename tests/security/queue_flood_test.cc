// One user flooding the queue: a request that once queued 100,000 tasks,
// after which one listing took 83 s, returned 307 MB and stalled every
// other user. Now the flood stops at the user's limit, other users still
// submit, and a listing is one bounded page.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/mutex.h"
#include "server/job_api.h"
#include "server/job_list_query.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace gleaner::server {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(QueueFloodTest, OneUserCannotFillTheQueueOrMakeListingsUnbounded) {
  testing::TempDir dir;
  auto store = store::SqliteStore::Open((dir.path() / "gleaner.db").string());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  core::Mutex store_mu;
  core::ManualClock clock(core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000));
  JobApi api(**store, store_mu, clock, sched::JobLimits{}, SubmitLimits{}, dir.path().string());
  const Caller mallory{2001, "mallory"};
  const Caller alice{2002, "alice"};
  const auto call = [&](const Caller& who, const std::string& method, const std::string& path,
                        const std::string& body = "") {
    HttpResponse r = api.Handle({method, path, {}, body}, who);
    return std::pair{r.status, json::parse(r.body)};
  };

  auto [flood, why] =
      call(mallory, "POST", "/v1/jobs", R"({"command": ["x"], "array": "0-99999"})");
  EXPECT_EQ(flood, 429);
  EXPECT_THAT(why["error"]["message"].get<std::string>(),
              HasSubstr("user mallory has 0 jobs not yet ended, and 100000 more would pass the "
                        "limit of 10000"));
  EXPECT_EQ(call(mallory, "POST", "/v1/jobs", R"({"command": ["x"], "array": "1-9999"})").first,
            201);
  EXPECT_EQ(call(mallory, "POST", "/v1/jobs", R"({"command": ["x"]})").first, 201);
  EXPECT_EQ(call(mallory, "POST", "/v1/jobs", R"({"command": ["x"]})").first, 429);
  EXPECT_EQ(call(alice, "POST", "/v1/jobs", R"({"command": ["x"]})").first, 201);

  // 10,001 jobs wait; a listing answers one page and says where the next
  // starts, however many there are.
  auto [status, page] = call(alice, "GET", "/v1/jobs");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(page["jobs"].size(), static_cast<size_t>(kDefaultJobPage));
  EXPECT_EQ(page["next"], kDefaultJobPage);
  EXPECT_EQ(call(alice, "GET", "/v1/jobs?limit=100000").first, 400);
  auto mine = call(alice, "GET", "/v1/jobs?user=alice").second;
  ASSERT_EQ(mine["jobs"].size(), 1u);
  EXPECT_EQ(mine["jobs"][0]["user"], "alice");
}

}  // namespace
}  // namespace gleaner::server
