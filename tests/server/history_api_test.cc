// The dashboard's history over the API: each GPU's last minutes for the
// sparklines, hour-of-week occupancy for the heatmaps, and 400s that name
// what was wrong with a request.
#include "server/history_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "observe/usage_profile.h"
#include "server/api.h"
#include "store/sqlite_store.h"
#include "testing/gpu_record.h"
#include "testing/temp_dir.h"

namespace gleaner::server {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// Monday 2027-01-11 08:00:00 UTC, on the hour.
const core::TimePoint kNow = core::FromUnixMicros(int64_t{1'799'654'400} * 1'000'000);

store::GpuRecord Gpu(const char* uuid, uint32_t index) {
  return testing::H100Record(uuid, index, kNow - core::Seconds(86400));
}

// The minute starting `minutes_ago` minutes before kNow, at `pct` busy.
observe::MinuteRollup Minute(const char* uuid, int minutes_ago, double pct, const char* user) {
  observe::MinuteRollup r;
  r.uuid = core::GpuUuid(uuid);
  r.minute = kNow - core::Seconds(60 * minutes_ago);
  r.samples = 60;
  r.utilization_mean_pct = pct;
  r.utilization_max_pct = pct + 5;
  r.memory_used_max = core::Bytes::GiB(static_cast<uint64_t>(minutes_ago));
  r.state = pct > 10 ? observe::GpuState::kBusy : observe::GpuState::kIdle;
  r.observed = core::Seconds(60);
  (pct > 10 ? r.busy : r.idle) = r.observed;
  if (*user) r.users.insert(user);
  return r;
}

class HistoryApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(store::SqliteStore::Open((dir_.path() / "g.db").string())).value();
    ASSERT_TRUE(store_->SaveGpus({Gpu("GPU-a", 0), Gpu("GPU-b", 1)}).ok());
    // GPU a: 90 minutes, alice's, busy in the last half hour. GPU b: only
    // the last 10 minutes, idle.
    std::vector<observe::MinuteRollup> minutes;
    for (int m = 90; m >= 1; --m) {
      minutes.push_back(Minute("GPU-a", m, m <= 30 ? 80 : 0, m <= 30 ? "alice" : ""));
    }
    for (int m = 10; m >= 1; --m) minutes.push_back(Minute("GPU-b", m, 0, ""));
    ASSERT_TRUE(store_->AddRollups(minutes).ok());
    observe::UsageProfiles profiles(std::map<std::string, std::string>{{"alice", "vision"}});
    for (const observe::MinuteRollup& r : minutes) profiles.Add(r);
    ASSERT_TRUE(store_->AddToProfiles(profiles).ok());
    ApiOptions options;
    options.user_name = [](uint32_t uid) { return "u" + std::to_string(uid); };
    options.uid_of = [](const std::string&) { return std::nullopt; };
    options.observations = store_.get();
    api_ = std::make_unique<Api>(*store_, clock_, options);
  }

  std::pair<int, json> Get(const std::string& path) {
    const HttpResponse r = api_->Handle({"GET", path, {}, ""}, Peer{1000});
    return {r.status, json::parse(r.body, nullptr, false)};
  }

  testing::TempDir dir_;
  core::ManualClock clock_{kNow + core::Seconds(20)};  // 20 s into a minute
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<Api> api_;
};

TEST_F(HistoryApiTest, HistoryGivesEachGpusLastMinutes) {
  auto [status, doc] = Get("/v1/history?minutes=60");
  ASSERT_EQ(status, 200) << doc.dump();
  EXPECT_EQ(doc["minutes"], 60);
  EXPECT_EQ(doc["from"], "2027-01-11T07:00:00.000Z");
  ASSERT_EQ(doc["gpus"].size(), 2u) << doc.dump();
  const json& a = doc["gpus"][0];
  EXPECT_EQ(a["uuid"], "GPU-a");
  EXPECT_EQ(a["host"], "node1");
  EXPECT_EQ(a["index"], 0);
  EXPECT_EQ(a["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(a["memory_total_bytes"], uint64_t{80} << 30);
  // The minutes 60 to 1 before the hour: the 90 to 61 are older.
  ASSERT_EQ(a["minutes"].size(), 60u);
  EXPECT_EQ(a["minutes"][0]["minute"], "2027-01-11T07:00:00.000Z");
  EXPECT_EQ(a["minutes"][0]["utilization_mean_pct"], 0);
  EXPECT_EQ(a["minutes"][0]["state"], "idle");
  const json& last = a["minutes"][59];
  EXPECT_EQ(last["minute"], "2027-01-11T07:59:00.000Z");
  EXPECT_EQ(last["utilization_mean_pct"], 80);
  EXPECT_EQ(last["utilization_max_pct"], 85);
  EXPECT_EQ(last["memory_used_max_bytes"], uint64_t{1} << 30);
  EXPECT_EQ(last["state"], "busy");
  EXPECT_EQ(doc["gpus"][1]["uuid"], "GPU-b");
  EXPECT_EQ(doc["gpus"][1]["minutes"].size(), 10u);

  auto [defaulted, hour] = Get("/v1/history");
  ASSERT_EQ(defaulted, 200);
  EXPECT_EQ(hour["minutes"], 60);
  auto [longer, day] = Get("/v1/history?minutes=1440");
  ASSERT_EQ(longer, 200);
  EXPECT_EQ(day["gpus"][0]["minutes"].size(), 90u);
  auto [shorter, five] = Get("/v1/history?minutes=5");
  ASSERT_EQ(shorter, 200);
  EXPECT_EQ(five["gpus"][1]["minutes"].size(), 5u);
}

TEST_F(HistoryApiTest, HistoryNamesWhatIsWrongWithARequest) {
  for (const char* bad : {"0", "1441", "ten", "", "5x", "-3"}) {
    auto [status, why] = Get(std::string("/v1/history?minutes=") + bad);
    EXPECT_EQ(status, 400) << bad;
    EXPECT_THAT(why["error"]["message"].get<std::string>(), HasSubstr("minutes: expected"));
  }
  auto [unknown, why] = Get("/v1/history?minute=5");
  EXPECT_EQ(unknown, 400);
  EXPECT_THAT(why["error"]["message"].get<std::string>(), HasSubstr("\"minute\""));
  EXPECT_EQ(api_->Handle({"POST", "/v1/history", {}, ""}, Peer{1000}).status, 405);
  EXPECT_EQ(Get("/v1/history/GPU-a").first, 404);
}

TEST_F(HistoryApiTest, ProfilesGiveOccupancyWithNullWhereNeverObserved) {
  auto [status, doc] = Get("/v1/profiles?kind=project");
  ASSERT_EQ(status, 200) << doc.dump();
  EXPECT_EQ(doc["kind"], "project");
  ASSERT_EQ(doc["profiles"].size(), 1u) << doc.dump();
  const json& vision = doc["profiles"][0];
  EXPECT_EQ(vision["key"], "vision");
  ASSERT_EQ(vision["occupancy"].size(), 168u);
  // Sunday 22:00 to 24:00 (hours 166, 167) before Monday 08:00 is not
  // observed; Monday 06:00 (hour 6) and 07:00 (hour 7) are.
  EXPECT_TRUE(vision["occupancy"][0].is_null());
  EXPECT_TRUE(vision["occupancy"][100].is_null());
  // Hour 7: both GPUs observed (GPU a all 60 minutes, GPU b 10), alice held
  // GPU a for the last 30: 30 / 70 of the host's GPU-time.
  EXPECT_NEAR(vision["occupancy"][7].get<double>(), 30.0 / 70, 0.001);
  EXPECT_EQ(vision["occupancy"][6], 0);
  EXPECT_NEAR(vision["observed_gpu_hours"].get<double>(), 100.0 / 60, 0.01);

  auto [host_status, host] = Get("/v1/profiles?kind=host");
  ASSERT_EQ(host_status, 200);
  EXPECT_EQ(host["profiles"][0]["key"], "all");
  EXPECT_NEAR(host["profiles"][0]["occupancy"][7].get<double>(), 30.0 / 70, 0.001);
  auto [gpu_status, gpus] = Get("/v1/profiles?kind=gpu");
  ASSERT_EQ(gpu_status, 200);
  ASSERT_EQ(gpus["profiles"].size(), 2u);
  EXPECT_EQ(gpus["profiles"][0]["key"], "GPU-a");
  EXPECT_NEAR(gpus["profiles"][0]["occupancy"][7].get<double>(), 0.5, 0.001);
  EXPECT_EQ(Get("/v1/profiles?kind=user").first, 200);
}

TEST_F(HistoryApiTest, ProfilesNameWhatIsWrongWithARequest) {
  auto [missing, why] = Get("/v1/profiles");
  EXPECT_EQ(missing, 400);
  EXPECT_THAT(why["error"]["message"].get<std::string>(), HasSubstr("kind is required"));
  auto [unknown_kind, kind_why] = Get("/v1/profiles?kind=rack");
  EXPECT_EQ(unknown_kind, 400);
  EXPECT_THAT(kind_why["error"]["message"].get<std::string>(), HasSubstr("\"rack\""));
  EXPECT_THAT(kind_why["error"]["message"].get<std::string>(),
              HasSubstr("gpu, user, project or host"));
  auto [extra, extra_why] = Get("/v1/profiles?kind=gpu&week=2");
  EXPECT_EQ(extra, 400);
  EXPECT_THAT(extra_why["error"]["message"].get<std::string>(), HasSubstr("\"week\""));
}

TEST(HistoryApiWithoutAStoreTest, IsUnavailable) {
  testing::TempDir dir;
  auto store = std::move(store::SqliteStore::Open((dir.path() / "g.db").string())).value();
  core::ManualClock clock(kNow);
  ApiOptions options;
  options.user_name = [](uint32_t uid) { return "u" + std::to_string(uid); };
  Api api(*store, clock, options);
  EXPECT_EQ(api.Handle({"GET", "/v1/history", {}, ""}, Peer{1000}).status, 503);
  EXPECT_EQ(api.Handle({"GET", "/v1/profiles?kind=gpu", {}, ""}, Peer{1000}).status, 503);
}

}  // namespace
}  // namespace gleaner::server
