#include "cli/cost_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/exit_codes.h"
#include "cost/civil_date.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner::cli {
namespace {

core::TimePoint Day(const char* date) {
  return core::FromUnixMicros(*cost::ParseIsoDate(date) * 86400 * int64_t{1'000'000});
}

// Options that read no config file and no history of the machine running the test.
CostAdviseOptions Isolated() {
  CostAdviseOptions o;
  o.data_dir = (std::filesystem::temp_directory_path() / "gleaner-cost-test-nothing-here").string();
  return o;
}

std::string RunBinary(const std::string& args, int* rc) {
  const testing::Outcome r = testing::Gleaner(args);
  *rc = r.rc;
  return r.out + r.err;
}

TEST(CostCommandTest, DoneWhenCommandPrintsEveryOptionAndARecommendation) {
  const testing::Outcome r = testing::Gleaner(
      "cost advise --gpu A100-80GB --count 8 --hours 24 --deadline 48h --as-of 2026-11-30 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["currency"], "USD");
  ASSERT_GE(j["options"].size(), 3u);
  for (const auto& o : j["options"]) {
    for (const char* key : {"kind", "expected_cost", "currency", "source", "date", "notes",
                            "arithmetic", "meets_deadline", "expected_hours", "stale"}) {
      EXPECT_TRUE(o.contains(key)) << key << " missing in " << o.dump();
    }
    EXPECT_GT(o["expected_cost"].get<double>(), 0) << o.dump();
  }
  EXPECT_TRUE(j["recommendation"]["kind"].is_string()) << j["recommendation"].dump();
  EXPECT_TRUE(j["recommendation"].contains("expected_cost"));
  EXPECT_EQ(j["request"]["deadline_hours"], 48.0);
}

TEST(CostCommandTest, HumanTableMarksTheRecommendation) {
  int rc = 0;
  const std::string out =
      RunBinary("cost advise --gpu H100-80GB --count 8 --hours 10 --as-of 2026-11-30", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("recommendation: "), std::string::npos) << out;
  EXPECT_NE(out.find("\n* "), std::string::npos) << out;
}

TEST(CostCommandTest, MissingPriceIsAnExplicitError) {
  int rc = 0;
  const std::string out =
      RunBinary("cost advise --gpu A100-80GB --count 8 --hours 24 --region mars-1", &rc);
  EXPECT_EQ(rc, kExitFailure);
  EXPECT_NE(out.find("no price for A100-80GB in region mars-1"), std::string::npos) << out;
}

TEST(CostCommandTest, BadUserCatalogNamesFileAndLine) {
  const auto path = std::filesystem::temp_directory_path() / "gleaner_cost_bad_catalog.csv";
  {
    std::ofstream f(path);
    f << "provider,region,instance,gpu_model,gpu_count,pricing_model,price_per_instance_hour,"
         "currency,source,date\n"
         "Mine,lab,box,A100-80GB,8,on-demand,12,USD,invoice,2026-10-01\n"
         "Mine,lab,box2,A100-80GB,8,on-demand,twelve,USD,invoice,2026-10-01\n";
  }
  CostAdviseOptions o = Isolated();
  o.gpu = "A100-80GB";
  o.count = 8;
  o.hours = 24;
  o.catalogs = {path.string()};
  std::ostringstream out, err;
  EXPECT_EQ(RunCostAdvise(o, Day("2026-11-30"), out, err), kExitBadInput);
  EXPECT_EQ(err.str(), "gleaner: " + path.string() +
                           ":3: column price_per_instance_hour: expected a number above 0, got "
                           "\"twelve\"\n");
  std::filesystem::remove(path);
}

TEST(CostCommandTest, UserCatalogRowIsUsed) {
  const auto path = std::filesystem::temp_directory_path() / "gleaner_cost_user_catalog.csv";
  {
    std::ofstream f(path);
    f << "provider,region,instance,gpu_model,gpu_count,pricing_model,price_per_instance_hour,"
         "currency,source,date\n"
         "Mine,lab,box,A100-80GB,8,on-demand,1,USD,our invoice,2026-10-01\n";
  }
  CostAdviseOptions o = Isolated();
  o.gpu = "A100-80GB";
  o.count = 8;
  o.hours = 24;
  o.region = "lab";
  o.json = true;
  o.catalogs = {path.string()};
  std::ostringstream out, err;
  ASSERT_EQ(RunCostAdvise(o, Day("2026-11-30"), out, err), kExitOk) << err.str();
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["recommendation"]["kind"], "on-demand");
  EXPECT_EQ(j["recommendation"]["expected_cost"], 24.0);  // 1 x 1 USD/h x 24 h
  std::filesystem::remove(path);
}

TEST(CostCommandTest, OnPremFlagsOverrideTheDefaults) {
  CostAdviseOptions o = Isolated();
  o.gpu = "A100-80GB";
  o.count = 8;
  o.hours = 24;
  o.json = true;
  // (400 W - 50 W) / 1000 x PUE 1.2 x 0.7 CNY/kWh = 0.294 CNY per GPU-hour;
  // 8 x 24 = 192 GPU-h x 0.294 = 56.448 CNY; at 7.0 CNY per USD = 8.064 USD.
  o.pue = 1.2;
  o.electricity_per_kwh = 0.7;
  o.onprem_currency = "CNY";
  o.cny_per_usd = 7.0;
  std::ostringstream out, err;
  ASSERT_EQ(RunCostAdvise(o, Day("2026-11-30"), out, err), kExitOk) << err.str();
  const nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_EQ(j["options"][0]["kind"], "in-house");
  EXPECT_NEAR(j["options"][0]["expected_cost"].get<double>(), 8.06, 1e-9);
  EXPECT_NE(j["options"][0]["source"].get<std::string>().find("--pue"), std::string::npos);

  CostAdviseOptions bad = o;
  bad.pue = 0.5;
  std::ostringstream out2, err2;
  EXPECT_EQ(RunCostAdvise(bad, Day("2026-11-30"), out2, err2), kExitUsage);
  EXPECT_EQ(err2.str(), "gleaner: on-prem pue: expected at least 1\n");

  CostAdviseOptions unknown = Isolated();
  unknown.gpu = "RTX4090";
  unknown.hours = 1;
  unknown.pue = 1.3;
  std::ostringstream out3, err3;
  EXPECT_EQ(RunCostAdvise(unknown, Day("2026-11-30"), out3, err3), kExitUsage);
  EXPECT_EQ(err3.str(),
            "gleaner: no on-prem defaults for RTX4090: pass at least --gpu-busy-w and "
            "--gpu-idle-w\n");
}

TEST(CostCommandTest, ReportAndAdviceFromTheDaemonsHistory) {
  testing::TempDir dir;
  const std::string data = dir.path().string();
  dir.Write("gleaner.toml", "[projects]\nalice = \"vision\"\n");
  const testing::Outcome up =
      testing::Gleaner("up --fake demo --data-dir " + data + " --listen none --for 3");
  ASSERT_EQ(up.rc, 0) << up.err;

  const testing::Outcome report = testing::Gleaner("--data-dir " + data + " cost report --json");
  ASSERT_EQ(report.rc, 0) << report.err;
  const nlohmann::json j = nlohmann::json::parse(report.out);
  EXPECT_EQ(j["format"], "gleaner.cost-report/v1");
  EXPECT_GT(j["total"]["gpu_hours"]["observed"].get<double>(), 0) << j["total"].dump();
  ASSERT_EQ(j["by_model"].size(), 1u);
  EXPECT_EQ(j["by_model"][0]["model"], "H100-80GB");  // the demo's "NVIDIA H100 80GB HBM3"
  EXPECT_EQ(j["by_gpu"].size(), 8u);
  EXPECT_TRUE(j["prices"][0]["owned_per_gpu_hour"].is_number()) << j["prices"].dump();
  bool vision = false;
  for (const auto& p : j["by_project"]) vision = vision || p["project"] == "vision";
  EXPECT_TRUE(vision) << j["by_project"].dump();  // alice's processes are on the demo's GPUs

  const testing::Outcome text = testing::Gleaner("--data-dir " + data + " cost report --by gpu");
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("by GPU"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("charge"), std::string::npos) << text.out;
  // Chargeback: the owners' own work priced too, a charge per user.
  const testing::Outcome charged =
      testing::Gleaner("--data-dir " + data + " cost report --by user --include busy");
  ASSERT_EQ(charged.rc, 0) << charged.err;
  EXPECT_THAT(charged.out, ::testing::ContainsRegex("by user +observed .* used cost +charge\n"));
  EXPECT_THAT(charged.out, ::testing::ContainsRegex("\nalice +[0-9]"));
  for (const auto& u : j["by_user"]) {
    const auto& m = u["money"];
    EXPECT_NEAR(m["charge"].get<double>(),
                m["used_cost"].get<double>() + m["held_idle_cost"].get<double>() +
                    m["harvested_owned_value"].get<double>(),
                0.011)
        << u.dump();
  }
  EXPECT_EQ(testing::Gleaner("--data-dir " + data + " cost report --include idle").rc, kExitUsage);

  const testing::Outcome advice = testing::Gleaner(
      "--data-dir " + data + " cost advise --gpu H100-80GB --count 2 --hours 1 --json");
  ASSERT_EQ(advice.rc, 0) << advice.err;
  const nlohmann::json a = nlohmann::json::parse(advice.out);
  ASSERT_EQ(a["options"][0]["kind"], "in-house");
  EXPECT_NE(a["options"][0]["arithmetic"].dump().find("history of 8 H100-80GB GPU(s)"),
            std::string::npos)
      << a["options"][0].dump();
  const testing::Outcome without = testing::Gleaner(
      "--data-dir " + data + " cost advise --gpu H100-80GB --hours 1 --no-history --json");
  ASSERT_EQ(without.rc, 0) << without.err;
  EXPECT_EQ(nlohmann::json::parse(without.out)["options"][0]["meets_deadline"], "unknown");

  const testing::Outcome nothing = testing::Gleaner("--data-dir " + data + "/nothing cost report");
  EXPECT_EQ(nothing.rc, kExitFailure);
  EXPECT_NE(nothing.err.find("no history at"), std::string::npos) << nothing.err;
  const testing::Outcome bad_since =
      testing::Gleaner("--data-dir " + data + " cost report --since yesterday");
  EXPECT_EQ(bad_since.rc, kExitUsage);
  EXPECT_NE(bad_since.err.find("since: expected"), std::string::npos) << bad_since.err;
}

}  // namespace
}  // namespace gleaner::cli
