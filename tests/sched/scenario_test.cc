// Runs every golden scenario in tests/sched/scenarios through the Scheduler.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "sched/scenario_runner.h"

namespace gleaner::sched {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> out;
  for (const auto& e :
       fs::directory_iterator(fs::path(GLEANER_SOURCE_DIR) / "tests/sched/scenarios")) {
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class ScenarioTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioTest, DecisionsMatchTheGoldenFile) {
  const fs::path file =
      fs::path(GLEANER_SOURCE_DIR) / "tests/sched/scenarios" / (GetParam() + ".json");
  std::ifstream in(file);
  ASSERT_TRUE(in) << file;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << file << ": not valid JSON";
  auto scenario = ScenarioFromJson(j);
  ASSERT_TRUE(scenario.ok()) << file << ": " << scenario.status().ToString();
  for (const std::string& failure : CheckScenario(*scenario))
    ADD_FAILURE() << file << ": " << failure;
}

INSTANTIATE_TEST_SUITE_P(Golden, ScenarioTest, ::testing::ValuesIn(ScenarioFiles()),
                         [](const auto& param_info) { return param_info.param; });

TEST(ScenarioFormatTest, MistakesNameTheFieldAndTheFix) {
  using nlohmann::json;
  auto bad_step = ScenarioFromJson(json::parse(R"({"steps": [{"at_s": 1}]})"));
  ASSERT_FALSE(bad_step.ok());
  EXPECT_NE(bad_step.status().message().find("steps[0]: needs one of submit"), std::string::npos)
      << bad_step.status().ToString();
  auto two = ScenarioFromJson(json::parse(R"({"steps": [{"tick": true, "finish": 1}]})"));
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("one event per step"), std::string::npos);
  auto field = ScenarioFromJson(json::parse(R"({"steps": [{"submit": {"id": 1, "gpu": 2}}]})"));
  ASSERT_FALSE(field.ok());
  EXPECT_NE(field.status().message().find("gpu: unknown field"), std::string::npos)
      << field.status().ToString();
  auto policy = ScenarioFromJson(json::parse(R"({"config": {"scorer": "random"}, "steps": []})"));
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(CheckScenario(*policy).size(), 1u);  // the unknown scorer, reported, not run
}

TEST(ScenarioFormatTest, AWrongExpectationIsReported) {
  auto s = ScenarioFromJson(nlohmann::json::parse(R"({
    "nodes": [{"id": "a", "gpus": 1}],
    "steps": [{"submit": {"id": 1}, "expect": ["start job 1 on a gpus 7"]},
              {"submit": {"id": 2}, "pending": {"2": "something else"}}]})"));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const auto failures = CheckScenario(*s);
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_NE(failures[0].find("start job 1 on a gpus 0"), std::string::npos) << failures[0];
  EXPECT_NE(failures[1].find("\"needs 1 GPU; no such GPU is free\""), std::string::npos)
      << failures[1];
}

}  // namespace
}  // namespace gleaner::sched
