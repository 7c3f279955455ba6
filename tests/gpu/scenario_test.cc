#include "gpu/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpu/builtin_scenarios.h"
#include "testing/temp_dir.h"

namespace gleaner::gpu {
namespace {

using ::testing::HasSubstr;

constexpr const char* kTwoGpus = R"({
  "name": "two",
  "period_s": 100,
  "gpus": [
    {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920, "power_limit_w": 400,
     "unsupported": ["temperature"],
     "faults": [{"fields": ["utilization", "power"], "error": "UNKNOWN", "from_s": 10, "to_s": 20}],
     "timeline": [
       {"at_s": 0, "utilization_gpu_pct": 50, "memory_used_mib": 1024,
        "processes": [{"pid": 7, "used_memory_mib": 1000, "user": "ann", "command": "python a.py"}]},
       {"at_s": 30, "utilization_gpu_pct": 0},
       {"at_s": 60, "memory_used_mib": 0, "processes": []}
     ]},
    {"uuid": "GPU-feedface-0000-4000-8000-000000000001", "name": "NVIDIA A100-SXM4-80GB",
     "pci_bus_id": "0000:b7:00.0", "memory_total_mib": 81920, "lost_at_s": 45}
  ],
  "topology": {"nvlink": [[0, 1]], "pcie_switch": [[0, 1]]}
})";

TEST(ScenarioTest, ParsesAndFillsDefaults) {
  auto s = ParseScenario(kTwoGpus, "two.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->name, "two");
  ASSERT_EQ(s->gpus.size(), 2u);
  const ScenarioGpu& g0 = s->gpus[0];
  EXPECT_EQ(g0.uuid, "GPU-00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(g0.pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(g0.memory_total, core::Bytes::MiB(81920));
  EXPECT_DOUBLE_EQ(g0.power_limit_w, 400);
  EXPECT_EQ(s->gpus[1].uuid, "GPU-feedface-0000-4000-8000-000000000001");
  EXPECT_EQ(s->gpus[1].pci_bus_id, "0000:b7:00.0");
  EXPECT_EQ(s->driver.version, "550.54.15");
}

TEST(ScenarioTest, FramesCarryOverOmittedFields) {
  auto s = ParseScenario(kTwoGpus, "two.json");
  ASSERT_TRUE(s.ok());
  const auto& t = s->gpus[0].timeline;
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[1].utilization_gpu_pct, 0u);
  EXPECT_EQ(t[1].memory_used, core::Bytes::MiB(1024));  // carried over
  ASSERT_EQ(t[1].processes.size(), 1u);                 // carried over
  EXPECT_EQ(t[1].processes[0].user, "ann");
  EXPECT_TRUE(t[2].processes.empty());  // replaced by an empty list
}

TEST(ScenarioTest, StateFollowsTimeAndRepeatsWithThePeriod) {
  auto s = ParseScenario(kTwoGpus, "two.json");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(GpuStateAt(*s, 0, 0).frame().utilization_gpu_pct, 50u);
  EXPECT_EQ(GpuStateAt(*s, 0, 29.9).frame().utilization_gpu_pct, 50u);
  EXPECT_EQ(GpuStateAt(*s, 0, 30).frame().utilization_gpu_pct, 0u);
  EXPECT_EQ(GpuStateAt(*s, 0, 99).frame().at_s, 60);
  EXPECT_EQ(GpuStateAt(*s, 0, 105).frame().utilization_gpu_pct, 50u);  // 105 mod 100 = 5
}

TEST(ScenarioTest, FaultsUnsupportedAndLoss) {
  auto s = ParseScenario(kTwoGpus, "two.json");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(GpuStateAt(*s, 0, 0).ErrorFor(ScenarioField::kTemperature),
            ScenarioError::kNotSupported);
  EXPECT_EQ(GpuStateAt(*s, 0, 5).ErrorFor(ScenarioField::kUtilization), std::nullopt);
  EXPECT_EQ(GpuStateAt(*s, 0, 10).ErrorFor(ScenarioField::kUtilization), ScenarioError::kUnknown);
  EXPECT_EQ(GpuStateAt(*s, 0, 15).ErrorFor(ScenarioField::kPower), ScenarioError::kUnknown);
  EXPECT_EQ(GpuStateAt(*s, 0, 15).ErrorFor(ScenarioField::kMemory), std::nullopt);
  EXPECT_EQ(GpuStateAt(*s, 0, 20).ErrorFor(ScenarioField::kUtilization), std::nullopt);
  EXPECT_FALSE(GpuStateAt(*s, 1, 44).lost());
  EXPECT_TRUE(GpuStateAt(*s, 1, 45).lost());
  EXPECT_EQ(GpuStateAt(*s, 1, 50).ErrorFor(ScenarioField::kMemory), ScenarioError::kGpuLost);
  // Loss is not undone by the period: a lost GPU stays lost.
  EXPECT_TRUE(GpuStateAt(*s, 1, 101).lost());
}

TEST(ScenarioTest, ErrorsCarryOverButAnXidHappensOnce) {
  auto s = ParseScenario(R"({"gpus": [{"name": "x", "memory_total_mib": 10, "timeline": [
      {"at_s": 0, "errors": {"pcie_replays": 3}},
      {"at_s": 10, "xid": 79, "errors": {"remap_failed": true}},
      {"at_s": 20, "xid": 48},
      {"at_s": 30}]}]})",
                         "t");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const ScenarioGpuState at25 = GpuStateAt(*s, 0, 25);
  EXPECT_EQ(at25.frame().errors.pcie_replays, 3u);
  EXPECT_TRUE(at25.frame().errors.remap_failed);
  EXPECT_EQ(at25.frame().xid, 48u);
  EXPECT_EQ(GpuStateAt(*s, 0, 35).frame().xid, 0u);
  EXPECT_EQ(GpuStateAt(*s, 0, 35).XidsSoFar().last, 48u);
  EXPECT_EQ(GpuStateAt(*s, 0, 35).XidsSoFar().count, 2u);
  EXPECT_EQ(GpuStateAt(*s, 0, 35).XidsSoFar().fatal, 48u);
  EXPECT_EQ(GpuStateAt(*s, 0, 5).XidsSoFar().count, 0u);
}

TEST(ScenarioTest, Topology) {
  auto s = ParseScenario(kTwoGpus, "two.json");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(NvlinkBetween(*s, 0, 1));
  EXPECT_EQ(PcieLevelBetween(*s, 0, 1), PcieLevel::kSinglePcieSwitch);
  auto demo = LoadScenario("demo");
  ASSERT_TRUE(demo.ok());
  EXPECT_EQ(PcieLevelBetween(*demo, 0, 1), PcieLevel::kSinglePcieSwitch);
  EXPECT_EQ(PcieLevelBetween(*demo, 0, 2), PcieLevel::kSameNumaNode);
  EXPECT_EQ(PcieLevelBetween(*demo, 0, 4), PcieLevel::kCrossSocket);
}

TEST(ScenarioTest, BuiltinDemoHasEightGpusWithAMix) {
  const std::vector<std::string> names = BuiltinScenarioNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "demo"), names.end());
  auto demo = LoadScenario("demo");
  ASSERT_TRUE(demo.ok()) << demo.status().ToString();
  ASSERT_EQ(demo->gpus.size(), 8u);
  int busy = 0, idle = 0, held = 0;
  for (size_t i = 0; i < 8; ++i) {
    const ScenarioFrame& f = GpuStateAt(*demo, i, 0).frame();
    if (f.utilization_gpu_pct >= 10)
      ++busy;
    else if (f.processes.empty())
      ++idle;
    else
      ++held;
  }
  EXPECT_GE(busy, 2);
  EXPECT_GE(idle, 2);
  EXPECT_GE(held, 1);
}

struct BadScenario {
  const char* text;
  const char* expected;  // a substring of the error
};

// Test names must not depend on addresses: ctest lists them in one process
// and runs them in another.
void PrintTo(const BadScenario& bad, std::ostream* os) { *os << bad.expected; }

class ScenarioErrorTest : public ::testing::TestWithParam<BadScenario> {};

TEST_P(ScenarioErrorTest, SaysWhereAndWhat) {
  auto s = ParseScenario(GetParam().text, "bad.json");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr(GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, ScenarioErrorTest,
    ::testing::Values(
        BadScenario{"{\n  \"gpus\": [\n    {\"name\": \"x\",}\n  ]\n}",
                    "bad.json:3: not valid JSON"},
        BadScenario{"{\"name\": \"x\"}", "bad.json:1: gpus: missing; expected a list of GPUs"},
        BadScenario{"{\n\"gpus\": [\n{\"name\": \"x\", \"memory_total_mib\": 10,\n"
                    "\"timeline\": [{\"at_s\": 0,\n\"utilization_gpu_pct\": 140}]}]}",
                    "bad.json:5: gpus[0].timeline[0].utilization_gpu_pct: expected a number from "
                    "0 to 100, got 140"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,\n"
                    " \"utilisation\": 3}]}",
                    "bad.json:2: gpus[0].utilisation: unknown key; expected one of: uuid"},
        BadScenario{"{\"gpus\": [{\"memory_total_mib\": 10}]}",
                    "gpus[0].name: missing; expected a string"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": \"lots\"}]}",
                    "gpus[0].memory_total_mib: expected a whole number, got \"lots\""},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10, \"uuid\": \"abc\"}]}",
                    "expected a UUID starting with \"GPU-\""},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,"
                    " \"timeline\": [{\"at_s\": 5}]}]}",
                    "the first frame must be at 0"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,"
                    " \"timeline\": [{\"at_s\": 0}, {\"at_s\": 0}]}]}",
                    "frames must be in increasing at_s order"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,"
                    " \"timeline\": [{\"at_s\": 0, \"memory_used_mib\": 11}]}]}",
                    "memory_used_mib: expected a number from 0 to 10, got 11"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,"
                    " \"faults\": [{\"fields\": [\"utilization\"], \"error\": \"OOPS\"}]}]}",
                    "gpus[0].faults[0].error: unknown value \"OOPS\"; expected one of"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,"
                    " \"unsupported\": [\"fan\"]}]}",
                    "gpus[0].unsupported[0]: unknown value \"fan\""},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10},"
                    " {\"name\": \"x\", \"memory_total_mib\": 10, "
                    "\"uuid\": \"GPU-00000000-0000-4000-8000-000000000000\"}]}",
                    "duplicate UUID"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10}],"
                    " \"topology\": {\"nvlink\": [[0, 3]]}}",
                    "topology.nvlink[0][1]: expected a GPU index from 0 to 0"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,"
                    " \"pci_bus_id\": \"18:00\"}]}",
                    "expected a GPU's sysfs address like \"0000:18:00.0\""},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,"
                    " \"pci_bus_id\": \"0000:18:00.1\"}]}",
                    "expected a GPU's sysfs address"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,"
                    " \"timeline\": [{\"at_s\": 0, \"processes\": [{\"pid\": 0}]}]}]}",
                    "processes[0].pid: expected a process id from 1"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,"
                    " \"timeline\": [{\"at_s\": 0, \"processes\": [{\"pid\": 5, "
                    "\"used_memory_mib\": 11}]}]}]}",
                    "processes[0].used_memory_mib: expected a number from 0 to 10"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,"
                    " \"timeline\": [{\"at_s\": 0, \"processes\": [{\"pid\": 5}, "
                    "{\"pid\": 5}]}]}]}",
                    "processes[1].pid: pid 5 appears twice"},
        BadScenario{"{\"gpus\": [{\"memory_total_mib\": 10, \"name\": \""
                    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}]}",
                    "gpus[0].name: too long: at most 95 characters"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 1e400}]}",
                    "not usable JSON"},
        BadScenario{"{\"gpus\": [], \"topology\": {\"nvlink\": [[0]]}}",
                    "topology.nvlink: refers to GPUs, but there are none"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,"
                    " \"faults\": [{\"fields\": [\"power\"], \"error\": \"DRIVER_NOT_LOADED\"}]}]}",
                    "faults[0].error: unknown value \"DRIVER_NOT_LOADED\""},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,"
                    " \"timeline\": [{\"at_s\": 0, \"errors\": {\"ecc\": 1}}]}]}",
                    "timeline[0].errors.ecc: unknown key; expected one of: ecc_corrected_volatile"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,"
                    " \"timeline\": [{\"at_s\": 0, \"errors\": {\"remap_failed\": 1}}]}]}",
                    "errors.remap_failed: expected true or false, got 1"},
        BadScenario{"{\"gpus\": [{\"name\": \"x\", \"memory_total_mib\": 10,"
                    " \"timeline\": [{\"at_s\": 0, \"xid\": -4}]}]}",
                    "timeline[0].xid: expected a number from 0 to 65535"},
        BadScenario{"[1, 2]", "(document): expected an object, got array"}));

TEST(ScenarioTest, HostileNestingIsAnErrorNotACrash) {
  const std::string deep =
      "{\"gpus\": [" + std::string(100000, '[') + std::string(100000, ']') + "]}";
  auto s = ParseScenario(deep, "deep.json");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("deep.json: nested deeper than 64 levels"));
}

TEST(ScenarioTest, BusIdsAreNormalisedToLowerCase) {
  auto s = ParseScenario(
      R"({"gpus": [{"name": "x", "memory_total_mib": 1, "pci_bus_id": "0000:AB:1F.0"}]})",
      "s.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->gpus[0].pci_bus_id, "0000:ab:1f.0");
}

TEST(ScenarioLoadTest, ReadsFilesAndNamesMissingOnes) {
  testing::TempDir dir;
  const std::string path = dir.Write("s.json", kTwoGpus);
  auto s = LoadScenario(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->gpus.size(), 2u);

  auto missing = LoadScenario("/no/such/scenario.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), core::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("/no/such/scenario.json"));
  EXPECT_THAT(missing.status().message(), HasSubstr("built-in: demo"));

  const std::string bad = dir.Write("bad.json", "{\n\"gpus\": 3\n}");
  auto error = LoadScenario(bad);
  ASSERT_FALSE(error.ok());
  EXPECT_THAT(error.status().message(),
              HasSubstr(bad + ":2: gpus: expected a list of GPUs, got number"));

  auto directory = LoadScenario(dir.path().string());
  ASSERT_FALSE(directory.ok());
  EXPECT_THAT(directory.status().message(), HasSubstr("is a directory"));
}

}  // namespace
}  // namespace gleaner::gpu
