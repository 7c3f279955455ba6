// `gleaner gpus` run in process, with a manual clock and fixed /proc.
#include "cli/gpus_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/exit_codes.h"
#include "testing/temp_dir.h"
#include "views/gpus_json.h"
#include "views/gpus_table.h"

namespace gleaner::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Outcome {
  int rc;
  std::string out;
  std::string err;
};

Outcome RunWith(const GpusOptions& options, const core::Clock& clock,
                const agent::ProcessInspector& inspector = agent::ProcfsInspector()) {
  std::ostringstream out, err;
  int rc = RunGpus(options, {clock, inspector, out, err});
  return {rc, out.str(), err.str()};
}

TEST(GpusCommandTest, JsonIsStampedWithTheClock) {
  core::ManualClock clock(core::FromUnixMicros(1'700'000'000'123'000));
  GpusOptions options;
  options.fake = "demo";
  options.json = true;
  Outcome r = RunWith(options, clock);
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["schema"], "gleaner.gpus/v1");
  EXPECT_EQ(doc["taken_at"], "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(doc["source"], "fake:demo");
  EXPECT_EQ(doc["gpus"].size(), 8u);
  EXPECT_EQ(doc["topology"].size(), 28u);
}

TEST(GpusCommandTest, TableShowsGpusProcessesAndTopology) {
  core::ManualClock clock;
  GpusOptions options;
  options.fake = "demo";
  options.topology = true;
  Outcome r = RunWith(options, clock);
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  for (const char* s : {"NVIDIA H100 80GB HBM3", "0000:db:00.0", "alice", "bob", "carol",
                        "python eval.py --suite full", "612 / 700 W", "69.6 / 79.6 GiB", "GPU7",
                        "PIX", "SYS", "NV"}) {
    EXPECT_THAT(r.out, HasSubstr(s));
  }
}

// A daemon serves its view as JSON: read back, it shows as the same table.
TEST(GpusCommandTest, AServedDocumentShowsAsTheSameTable) {
  core::ManualClock clock(core::FromUnixMicros(1'700'000'000'123'000));
  GpusOptions options;
  options.fake = "demo";
  const Outcome table = RunWith(options, clock);
  ASSERT_EQ(table.rc, kExitOk) << table.err;
  options.json = true;
  const Outcome doc = RunWith(options, clock);
  ASSERT_EQ(doc.rc, kExitOk) << doc.err;
  auto view = views::HostViewFromJson(nlohmann::json::parse(doc.out));
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  view->topology.clear();
  EXPECT_EQ(views::GpusToTable(*view), table.out);
  EXPECT_FALSE(views::HostViewFromJson(nlohmann::json{{"schema", "other/v1"}}).ok());
  const auto damaged = views::HostViewFromJson(
      nlohmann::json{{"schema", "gleaner.gpus/v1"}, {"gpus", {{{"index", "zero"}}}}});
  EXPECT_FALSE(damaged.ok());
}

TEST(GpusCommandTest, UnreadableFieldsShowAsNotAvailableNotZero) {
  testing::TempDir dir;
  const std::string scenario = dir.Write("s.json", R"({"gpus": [
    {"name": "NVIDIA L4", "memory_total_mib": 23034, "unsupported": ["temperature", "power"],
     "lost_at_s": 1e6}]})");
  core::ManualClock clock;
  GpusOptions options;
  options.fake = scenario;
  Outcome table = RunWith(options, clock);
  EXPECT_THAT(table.out, HasSubstr("n/a"));
  options.json = true;
  auto doc = nlohmann::json::parse(RunWith(options, clock).out);
  const auto& gpu = doc["gpus"][0];
  EXPECT_TRUE(gpu["temperature_c"].is_null());
  EXPECT_EQ(gpu["unavailable"]["temperature_c"], "not_supported");
  EXPECT_EQ(gpu["unavailable"]["power_draw_w"], "not_supported");
  EXPECT_EQ(gpu["utilization_gpu_pct"], 0);
  EXPECT_FALSE(gpu["unavailable"].contains("utilization_gpu_pct"));
}

TEST(GpusCommandTest, ALostGpuIsShownNotFatal) {
  testing::TempDir dir;
  const std::string scenario = dir.Write("s.json", R"({"gpus": [
    {"name": "A", "memory_total_mib": 100, "lost_at_s": 0}, {"name": "B", "memory_total_mib": 100}]})");
  core::ManualClock clock;
  GpusOptions options;
  options.fake = scenario;
  Outcome table = RunWith(options, clock);
  ASSERT_EQ(table.rc, kExitOk);
  EXPECT_THAT(table.out, HasSubstr("lost (GPU_IS_LOST)"));
  options.json = true;
  auto doc = nlohmann::json::parse(RunWith(options, clock).out);
  EXPECT_EQ(doc["gpus"][0]["health"], "lost");
  EXPECT_EQ(doc["gpus"][0]["unavailable"]["memory_used_bytes"], "gpu_lost");
  EXPECT_EQ(doc["gpus"][1]["health"], "ok");
}

TEST(GpusCommandTest, CommandLinesThatAreNotUtf8DoNotBreakJson) {
  testing::TempDir dir;
  const std::string scenario =
      dir.Write("s.json", R"({"gpus": [{"name": "A", "memory_total_mib": 100,
    "timeline": [{"at_s": 0, "processes": [{"pid": 4242, "used_memory_mib": 10}]}]}]})");
  testing::TempDir proc;
  proc.Write("4242/status", "Name:\tx\nUid:\t0\t0\t0\t0\n");
  proc.Write("4242/cmdline", std::string("caf\xe9\0--x\0", 8));
  agent::ProcfsInspector inspector(proc.path().string());
  core::ManualClock clock;
  GpusOptions options;
  options.fake = scenario;
  options.json = true;
  Outcome r = RunWith(options, clock, inspector);
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["gpus"][0]["processes"][0]["command"], "caf\ufffd --x");
  EXPECT_EQ(doc["gpus"][0]["processes"][0]["user"], "root");
}

TEST(GpusCommandTest, BadScenarioSaysWhereAndExitsWithBadInput) {
  testing::TempDir dir;
  const std::string scenario = dir.Write("s.json", "{\n\"gpus\": [{\"name\": 3}]\n}");
  core::ManualClock clock;
  GpusOptions options;
  options.fake = scenario;
  Outcome r = RunWith(options, clock);
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr(scenario + ":2: gpus[0].name: expected a string"));
  EXPECT_EQ(r.out, "");
}

TEST(GpusCommandTest, NoDriverExitsWithItsOwnCode) {
  core::ManualClock clock;
  GpusOptions options;
  options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  Outcome r = RunWith(options, clock);
  EXPECT_EQ(r.rc, kExitNoDriver);
  EXPECT_THAT(r.err, HasSubstr("no NVIDIA driver found"));
  EXPECT_THAT(r.err, HasSubstr("--fake demo"));
  EXPECT_THAT(r.out, Not(HasSubstr("GPU")));
}

TEST(GpusCommandTest, DriverThatFailsToInitialise) {
  testing::TempDir dir;
  const std::string scenario =
      dir.Write("s.json", R"({"driver": {"init_error": "DRIVER_NOT_LOADED"}, "gpus": []})");
  core::ManualClock clock;
  GpusOptions options;
  options.fake = scenario;
  Outcome r = RunWith(options, clock);
  EXPECT_EQ(r.rc, kExitNoDriver);
  EXPECT_THAT(r.err, HasSubstr("DRIVER_NOT_LOADED"));
}

}  // namespace
}  // namespace gleaner::cli
