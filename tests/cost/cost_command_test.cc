#include "cli/cost_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/exit_codes.h"
#include "cost/civil_date.h"
#include "testing/run_gleaner.h"

namespace gleaner::cli {
namespace {

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
  CostAdviseOptions o;
  o.gpu = "A100-80GB";
  o.count = 8;
  o.hours = 24;
  o.catalogs = {path.string()};
  std::ostringstream out, err;
  EXPECT_EQ(RunCostAdvise(o, *cost::ParseIsoDate("2026-11-30"), out, err), kExitBadInput);
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
  CostAdviseOptions o;
  o.gpu = "A100-80GB";
  o.count = 8;
  o.hours = 24;
  o.region = "lab";
  o.json = true;
  o.catalogs = {path.string()};
  std::ostringstream out, err;
  ASSERT_EQ(RunCostAdvise(o, *cost::ParseIsoDate("2026-11-30"), out, err), kExitOk) << err.str();
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["recommendation"]["kind"], "on-demand");
  EXPECT_EQ(j["recommendation"]["expected_cost"], 24.0);  // 1 x 1 USD/h x 24 h
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gleaner::cli
