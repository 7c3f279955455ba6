// Money over the API: the ledger of a store's GPU minutes, the idle
// forecast its history gives the advisor, and the /v1/cost routes.
#include "server/cost_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cost/onprem.h"
#include "net/http_client.h"
#include "observe/usage_profile.h"
#include "server/api.h"
#include "server/cost_ledger.h"
#include "store/sqlite_store.h"
#include "testing/gpu_record.h"
#include "testing/temp_dir.h"

namespace gleaner::server {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// 2027-01-15 08:00:00 UTC, on the hour.
const core::TimePoint kNow = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

store::GpuRecord Gpu(const char* uuid, uint32_t index) {
  return testing::H100Record(uuid, index, kNow - core::Seconds(86400));
}

// One minute of `uuid` starting `minutes_ago` before kNow, all of it in `state`.
observe::MinuteRollup Minute(const char* uuid, int minutes_ago, observe::GpuState state,
                             const char* user = "", bool job = false) {
  observe::MinuteRollup r;
  r.uuid = core::GpuUuid(uuid);
  r.minute = kNow - core::Seconds(60 * minutes_ago);
  r.samples = 60;
  r.state = state;
  r.observed = core::Seconds(60);
  if (state == observe::GpuState::kIdle) {
    r.idle = r.observed;
  } else {
    r.busy = r.observed;
  }
  if (state == observe::GpuState::kHeldIdle) r.held_idle = r.observed;
  if (state == observe::GpuState::kHarvested) r.harvested = r.observed;
  if (*user) (job ? r.job_users : r.users).insert(user);
  return r;
}

class CostApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(store::SqliteStore::Open((dir_.path() / "g.db").string())).value();
    ASSERT_TRUE(store_->SaveGpus({Gpu("GPU-a", 0), Gpu("GPU-b", 1)}).ok());
    // GPU a: idle 3h..2h ago, held idle by alice 2h..1h ago. GPU b: bob's
    // gleaner job 1h..30m ago.
    std::vector<observe::MinuteRollup> minutes;
    for (int m = 180; m > 120; --m) minutes.push_back(Minute("GPU-a", m, observe::GpuState::kIdle));
    for (int m = 120; m > 60; --m) {
      minutes.push_back(Minute("GPU-a", m, observe::GpuState::kHeldIdle, "alice"));
    }
    for (int m = 60; m > 30; --m) {
      minutes.push_back(Minute("GPU-b", m, observe::GpuState::kHarvested, "bob", true));
    }
    ASSERT_TRUE(store_->AddRollups(minutes).ok());
    auto catalog = cost::Catalog::Parse(
        "provider,region,instance,gpu_model,gpu_count,pricing_model,price_per_instance_hour,"
        "currency,source,date\n"
        "P,r1,one,H100-80GB-SXM,1,on-demand,3,USD,s1,2026-12-01\n"
        "P,r1,one,H100-80GB-SXM,1,spot,1,USD,s1,2026-12-01\n",
        "test.csv");
    ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
    options_.catalog = *catalog;
    options_.project_of_user = {{"alice", "vision"}};
    owned_ = cost::ComputeOnPremCost(*cost::DefaultOnPremParams("H100-80GB"));
  }

  testing::TempDir dir_;
  std::unique_ptr<store::SqliteStore> store_;
  CostApiOptions options_;
  cost::OnPremCost owned_;
};

TEST_F(CostApiTest, LedgerPricesEachHourAndNamesWhoHeldIt) {
  auto ledger = BuildLedgerReport(*store_, options_.catalog, options_.settings,
                                  options_.project_of_user, kNow - core::Seconds(86400), kNow);
  ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
  const cost::CostReport& r = ledger->report;
  EXPECT_NEAR(r.total.observed_h, 2.5, 1e-9);
  EXPECT_NEAR(r.total.idle_h, 1, 1e-9);
  EXPECT_NEAR(r.total.held_idle_h, 1, 1e-9);
  EXPECT_NEAR(r.total.harvested_h, 0.5, 1e-9);
  // An owned H100 GPU-hour by the defaults (docs/cost.md: 11.91 / 8 = 1.49).
  EXPECT_NEAR(r.total.idle_cost, owned_.per_gpu_hour, 1e-9);
  EXPECT_NEAR(r.by_user.at("alice").held_idle_cost, owned_.per_gpu_hour, 1e-9);
  EXPECT_NEAR(r.by_project.at("vision").held_idle_h, 1, 1e-9);
  // bob's half hour at the 3 USD on-demand price, less the extra energy.
  EXPECT_NEAR(r.by_user.at("bob").harvested_cloud_value, 1.5, 1e-9);
  EXPECT_NEAR(r.by_user.at("bob").net_savings, 1.5 - 0.5 * owned_.marginal_per_gpu_hour, 1e-9);
  ASSERT_EQ(r.by_model.size(), 1u);
  EXPECT_EQ(r.by_model.begin()->first, "H100-80GB");
  EXPECT_TRUE(ledger->warnings.empty());

  const json j = json::parse(LedgerReportToJson(*ledger).dump());
  EXPECT_EQ(j["format"], "gleaner.cost-report/v1");
  EXPECT_EQ(j["total"]["gpu_hours"]["held_idle"], 1.0);
  EXPECT_EQ(j["by_gpu"][0]["host"], "node1");
  EXPECT_EQ(j["prices"][0]["cloud_offer"], "P r1 one");
}

TEST_F(CostApiTest, MinutesOfAnUnrecordedGpuAreCountedNotPriced) {
  ASSERT_TRUE(store_->AddRollups({Minute("GPU-z", 10, observe::GpuState::kIdle)}).ok());
  auto ledger = BuildLedgerReport(*store_, options_.catalog, options_.settings, {},
                                  kNow - core::Seconds(86400), kNow);
  ASSERT_TRUE(ledger.ok());
  EXPECT_NEAR(ledger->report.by_model.at(kUnrecordedModel).unpriced_owned_h, 1.0 / 60, 1e-9);
  ASSERT_EQ(ledger->warnings.size(), 1u);
  EXPECT_THAT(ledger->warnings[0], HasSubstr("no recorded model"));
}

TEST_F(CostApiTest, ForecastIsTheLendableShareOfEachHourOfTheWeek) {
  auto f =
      ForecastIdleGpus(*store_, options_.settings, "H100-80GB", kNow, core::Seconds(7 * 86400));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE(f->has_value());
  const auto hour = [](int hours_ago) {
    return static_cast<size_t>(observe::HourOfWeek(kNow - core::Seconds(3600 * hours_ago)));
  };
  EXPECT_DOUBLE_EQ((*f)->idle_gpus[hour(3)], 1.0);  // a's idle hour
  EXPECT_DOUBLE_EQ((*f)->idle_gpus[hour(2)], 0.0);  // a held idle: not lendable
  EXPECT_DOUBLE_EQ((*f)->idle_gpus[hour(1)], 1.0);  // b harvested all it was seen
  EXPECT_DOUBLE_EQ((*f)->now_hour_of_week, observe::HourOfWeek(kNow));
  EXPECT_THAT((*f)->basis, HasSubstr("2 H100-80GB GPU(s)"));
  auto none =
      ForecastIdleGpus(*store_, options_.settings, "A100-80GB", kNow, core::Seconds(7 * 86400));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(ReportSpanTest, DurationsDatesAndMistakes) {
  auto week = ParseReportSpan("7d", "", kNow);
  ASSERT_TRUE(week.ok());
  EXPECT_EQ(week->first, kNow - core::Seconds(7 * 86400));
  EXPECT_EQ(week->second, kNow);
  auto dates = ParseReportSpan("2027-01-01", "2027-01-02", kNow);
  ASSERT_TRUE(dates.ok());
  EXPECT_EQ(dates->second - dates->first, core::Seconds(86400));
  EXPECT_THAT(ParseReportSpan("last week", "", kNow).status().message(), HasSubstr("since"));
  EXPECT_THAT(ParseReportSpan("2027-01-02", "2027-01-01", kNow).status().message(),
              HasSubstr("before"));
}

TEST_F(CostApiTest, RoutesOverTheSocket) {
  core::ManualClock clock(kNow);
  ApiOptions api_options;
  api_options.user_name = [](uint32_t uid) { return "u" + std::to_string(uid); };
  api_options.uid_of = [](const std::string&) { return std::nullopt; };
  api_options.observations = store_.get();
  api_options.cost = options_;
  Api api(*store_, clock, api_options);
  net::Endpoint socket;
  socket.unix_path = (dir_.path() / "g.sock").string();
  auto server = HttpServer::ServeUnix(
      socket.unix_path, [&api](const HttpRequest& r, const Peer& p) { return api.Handle(r, p); });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const auto get = [&socket](const std::string& path) {
    auto r = net::HttpCall(socket, "GET", path, "", "");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return std::make_pair(r->first, json::parse(r->second, nullptr, false));
  };

  auto [status, report] = get("/v1/cost/report?since=1d");
  ASSERT_EQ(status, 200) << report.dump();
  EXPECT_EQ(report["total"]["gpu_hours"]["observed"], 2.5);
  EXPECT_EQ(report["by_user"][0]["user"], "alice");

  auto [advised, advice] = get("/v1/cost/advise?gpu=H100-80GB&hours=0.5&deadline=48h");
  ASSERT_EQ(advised, 200) << advice.dump();
  const json& in_house = advice["options"][0];
  ASSERT_EQ(in_house["kind"], "in-house") << advice.dump();
  // The only lendable hours are 3 h and 1 h before now, a week apart from
  // their next turn: not within 48 h.
  EXPECT_EQ(in_house["meets_deadline"], "no") << in_house.dump();
  EXPECT_NEAR(in_house["expected_hours"].get<double>(), 165.5, 1e-9) << in_house.dump();
  EXPECT_EQ(advice["recommendation"]["kind"], "spot") << advice.dump();

  EXPECT_EQ(get("/v1/cost/report?since=soon").first, 400);
  auto [unknown, why] = get("/v1/cost/report?sinse=1d");
  EXPECT_EQ(unknown, 400);
  EXPECT_THAT(why["error"]["message"].get<std::string>(), HasSubstr("unknown query parameter"));
  EXPECT_EQ(get("/v1/cost/advise?hours=1").first, 400);
  EXPECT_EQ(get("/v1/cost/advise?gpu=B200&hours=1").first, 404);
  EXPECT_EQ(get("/v1/cost/nothing").first, 404);
}

}  // namespace
}  // namespace gleaner::server
