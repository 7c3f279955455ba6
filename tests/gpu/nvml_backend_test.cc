// The NVML backend, driven through the fake libnvidia-ml.so.1 variants by the
// real loader: every field, every error path, every symbol era.
#include "gpu/nvml/nvml_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "gpu/fake_backend.h"
#include "testing/fake_nvml.h"

namespace gleaner::gpu {
namespace {

using ::testing::Contains;
using testing::FakeNvml;
using ::testing::HasSubstr;
using ::testing::Not;

const char* const kAllVariants[] = {"legacy", "v2", "modern", "r535", "r535_misdetected"};

// A scenario exercising every field: exact values, both process kinds, and
// a GPU whose readings are partly unsupported.
constexpr const char* kFields = R"({
  "name": "fields",
  "driver": {"version": "535.104.05", "nvml_version": "12.535.104.05", "cuda_version": 12020},
  "gpus": [
    {"uuid": "GPU-11111111-2222-4333-8444-555555555555", "name": "NVIDIA A100-SXM4-80GB",
     "pci_bus_id": "0000:07:00.0", "memory_total_mib": 81920, "power_limit_w": 400,
     "timeline": [{"at_s": 0, "utilization_gpu_pct": 73, "utilization_memory_pct": 28,
                   "memory_used_mib": 40960, "temperature_c": 58, "power_draw_w": 311.257,
                   "sm_clock_mhz": 1410,
                   "processes": [
                     {"pid": 300, "used_memory_mib": 30000, "type": "compute", "sm_util_pct": 70},
                     {"pid": 100, "used_memory_mib": 10000, "type": "compute+graphics",
                      "sm_util_pct": 3},
                     {"pid": 200, "used_memory_mib": 900, "type": "graphics", "sm_util_pct": 0}]}]},
    {"name": "NVIDIA L4", "memory_total_mib": 23034, "power_limit_w": 72,
     "unsupported": ["temperature", "power", "sm_clock", "processes"]}
  ]
})";

class NvmlVariantTest : public ::testing::TestWithParam<const char*> {};

TEST_P(NvmlVariantTest, ReadsEveryField) {
  FakeNvml fake(GetParam(), kFields);
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  const DriverInfo& d = (*backend)->Driver();
  EXPECT_EQ(d.source, "nvml");
  EXPECT_EQ(d.driver_version.value(), "535.104.05");
  EXPECT_EQ(d.nvml_version.value(), "12.535.104.05");
  EXPECT_EQ(d.cuda_driver_version.value(), 12020);

  auto snap = (*backend)->Snapshot();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap->size(), 2u);
  const GpuSnapshot& g = (*snap)[0];
  EXPECT_EQ(g.index, 0u);
  EXPECT_EQ(g.uuid.str(), "GPU-11111111-2222-4333-8444-555555555555");
  EXPECT_EQ(g.health, GpuHealth::kOk);
  EXPECT_EQ(g.name.value(), "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(g.pci_bus_id.value(), "0000:07:00.0");
  EXPECT_EQ(g.memory_total.value(), core::Bytes::MiB(81920));
  EXPECT_EQ(g.memory_used.value(), core::Bytes::MiB(40960));
  EXPECT_EQ(g.utilization_gpu_pct.value(), 73u);
  EXPECT_EQ(g.utilization_memory_pct.value(), 28u);
  EXPECT_EQ(g.temperature_c.value(), 58);
  EXPECT_DOUBLE_EQ(g.power_draw_w.value(), 311.257);
  EXPECT_DOUBLE_EQ(g.power_limit_w.value(), 400);
  EXPECT_EQ(g.sm_clock_mhz.value(), 1410u);
  const std::vector<GpuProcess>& p = g.processes.value();
  ASSERT_EQ(p.size(), 3u);  // merged by pid, sorted
  EXPECT_EQ(p[0], (GpuProcess{100, Reading<core::Bytes>::Of(core::Bytes::MiB(10000)),
                              Reading<uint32_t>::Of(3), true, true}));
  EXPECT_EQ(p[1], (GpuProcess{200, Reading<core::Bytes>::Of(core::Bytes::MiB(900)),
                              Reading<uint32_t>::Of(0), false, true}));
  EXPECT_EQ(p[2], (GpuProcess{300, Reading<core::Bytes>::Of(core::Bytes::MiB(30000)),
                              Reading<uint32_t>::Of(70), true, false}));
  // Each pass asks only for samples newer than the last: the figures hold.
  auto again = (*backend)->Snapshot();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[0].processes.value()[2].sm_utilization_pct.value(), 70u);
  EXPECT_EQ((*again)[0].processes.value()[0].sm_utilization_pct.value(), 3u);

  const GpuSnapshot& l4 = (*snap)[1];
  EXPECT_EQ(l4.health, GpuHealth::kOk);
  EXPECT_EQ(l4.memory_total.value(), core::Bytes::MiB(23034));
  EXPECT_EQ(l4.utilization_gpu_pct.value(), 0u);  // zero, and supported
  for (Unreadable why :
       {l4.temperature_c.why(), l4.power_draw_w.why(), l4.sm_clock_mhz.why(), l4.processes.why()}) {
    EXPECT_EQ(why, Unreadable::kNotSupported);
  }
  EXPECT_FALSE(l4.temperature_c.has_value());
  EXPECT_TRUE(l4.power_limit_w.has_value());  // only the draw is unsupported
}

// Faults of every kind, a GPU lost mid-run, one never attached, graphics
// contexts: what the parity test plays besides the demo.
constexpr const char* kTrouble = R"({
  "name": "trouble",
  "gpus": [
    {"name": "A", "memory_total_mib": 1000, "unsupported": ["sm_clock"],
     "faults": [{"fields": ["utilization", "processes"], "error": "UNKNOWN", "from_s": 10, "to_s": 20},
                {"fields": ["power"], "error": "GPU_IS_LOST", "from_s": 30, "to_s": 40},
                {"fields": ["temperature"], "error": "NO_PERMISSION"}],
     "timeline": [{"at_s": 0, "utilization_gpu_pct": 5,
                   "processes": [{"pid": 10, "used_memory_mib": 100, "type": "graphics"},
                                 {"pid": 11, "used_memory_mib": 200, "type": "compute+graphics"}]}]},
    {"name": "B", "memory_total_mib": 1000, "lost_at_s": 25},
    {"name": "C", "memory_total_mib": 1000, "access": "no_permission"},
    {"name": "D", "memory_total_mib": 1000, "pci_bus_id": "0000:AF:00.0"}
  ],
  "topology": {"nvlink": [[0, 1, 3]], "host_bridge": [[0, 3]]}
})";

// The same scenario read through the real loader and through the in-process
// fake gives the same snapshots and topology at every point of its timeline.
TEST_P(NvmlVariantTest, AgreesWithTheInProcessFake) {
  const std::pair<const char*, std::vector<double>> cases[] = {
      {"demo", {0, 65, 130, 205, 250, 305, 430, 610}},
      {kFields, {0}},
      {kTrouble, {0, 15, 26, 35, 50}},
  };
  for (const auto& [text, times] : cases) {
    FakeNvml fake(GetParam(), text);
    auto nvml = fake.Open();
    ASSERT_TRUE(nvml.ok()) << nvml.status().ToString();
    core::ManualClock clock;
    auto scenario = std::string(text) == "demo" ? LoadScenario("demo") : ParseScenario(text, "t");
    ASSERT_TRUE(scenario.ok());
    auto in_process = FakeBackend::Create(std::move(scenario).value(), clock);
    ASSERT_TRUE(in_process.ok());
    for (double t : times) {
      fake.SetTime(t);
      clock.Set(core::FromUnixMicros(static_cast<int64_t>(t * 1e6)));
      auto a = (*nvml)->Snapshot();
      auto b = (*in_process)->Snapshot();
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(*a, *b) << (*in_process)->scenario().name << " at t=" << t;
      for (size_t i = 0; i < a->size() && i < b->size(); ++i) {
        EXPECT_EQ((*a)[i].health, (*b)[i].health) << "GPU " << i << " at t=" << t;
      }
      EXPECT_EQ(*(*nvml)->Topology(), *(*in_process)->Topology())
          << (*in_process)->scenario().name << " at t=" << t;
    }
  }
}

TEST_P(NvmlVariantTest, GpuLostMidRun) {
  FakeNvml fake(GetParam(), R"({"gpus": [
    {"name": "A", "memory_total_mib": 1000, "lost_at_s": 10,
     "timeline": [{"at_s": 0, "utilization_gpu_pct": 40,
                   "processes": [{"pid": 9, "used_memory_mib": 100}]}]},
    {"name": "B", "memory_total_mib": 1000}]})");
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok());
  fake.SetTime(5);
  auto before = (*backend)->Snapshot();
  EXPECT_EQ((*before)[0].health, GpuHealth::kOk);
  EXPECT_EQ((*before)[0].utilization_gpu_pct.value(), 40u);

  fake.SetTime(11);
  auto after = (*backend)->Snapshot();
  ASSERT_TRUE(after.ok()) << "one lost GPU must not fail the whole snapshot";
  const GpuSnapshot& lost = (*after)[0];
  EXPECT_EQ(lost.health, GpuHealth::kLost);
  EXPECT_EQ(lost.uuid.str(), "GPU-00000000-0000-4000-8000-000000000000");  // still known
  EXPECT_EQ(lost.name.value(), "A");  // identity read at attach
  EXPECT_EQ(lost.utilization_gpu_pct.why(), Unreadable::kGpuLost);
  EXPECT_EQ(lost.memory_used.why(), Unreadable::kGpuLost);
  EXPECT_EQ(lost.processes.why(), Unreadable::kGpuLost);
  EXPECT_EQ((*after)[1].health, GpuHealth::kOk);
  auto links = (*backend)->Topology();
  ASSERT_EQ(links->size(), 1u);
  EXPECT_EQ((*links)[0].pcie.why(), Unreadable::kGpuLost);
}

TEST_P(NvmlVariantTest, GpusThatCannotBeAttached) {
  FakeNvml fake(GetParam(), R"({"gpus": [
    {"name": "A", "memory_total_mib": 1000, "access": "no_permission"},
    {"name": "B", "memory_total_mib": 1000, "lost_at_s": 0},
    {"name": "C", "memory_total_mib": 1000}]})");
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok());
  auto snap = (*backend)->Snapshot();
  ASSERT_EQ(snap->size(), 3u);
  EXPECT_EQ((*snap)[0].health, GpuHealth::kNoPermission);
  EXPECT_TRUE((*snap)[0].uuid.empty());
  EXPECT_EQ((*snap)[0].memory_total.why(), Unreadable::kNoPermission);
  EXPECT_EQ((*snap)[1].health, GpuHealth::kLost);
  EXPECT_EQ((*snap)[1].processes.why(), Unreadable::kGpuLost);
  EXPECT_EQ((*snap)[2].health, GpuHealth::kOk);
  EXPECT_TRUE((*backend)->Topology()->empty());  // no pair of attached GPUs
}

TEST_P(NvmlVariantTest, TransientFaultsAffectOnlyTheirFieldsAndWindow) {
  FakeNvml fake(GetParam(), R"({"gpus": [
    {"name": "A", "memory_total_mib": 1000,
     "faults": [{"fields": ["utilization", "processes"], "error": "UNKNOWN", "from_s": 30, "to_s": 40},
                {"fields": ["temperature"], "error": "NO_PERMISSION"}],
     "timeline": [{"at_s": 0, "utilization_gpu_pct": 12, "temperature_c": 40}]}]})");
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok());
  fake.SetTime(35);
  GpuSnapshot during = (*(*backend)->Snapshot())[0];
  EXPECT_EQ(during.health, GpuHealth::kOk);
  EXPECT_EQ(during.utilization_gpu_pct.why(), Unreadable::kError);
  EXPECT_EQ(during.utilization_gpu_pct.detail(), "UNKNOWN");
  EXPECT_EQ(during.processes.why(), Unreadable::kError);
  EXPECT_EQ(during.temperature_c.why(), Unreadable::kNoPermission);
  EXPECT_TRUE(during.memory_used.has_value());
  fake.SetTime(40);
  GpuSnapshot after = (*(*backend)->Snapshot())[0];
  EXPECT_EQ(after.utilization_gpu_pct.value(), 12u);
  EXPECT_TRUE(after.processes.has_value());
}

// Health faults injected through the fake driver: counters read, Xid
// events delivered once and kept, and the GPU judged faulty with the reason.
TEST_P(NvmlVariantTest, ErrorCountersAndXidEventsMakeAGpuFaulty) {
  FakeNvml fake(GetParam(), R"({"gpus": [
    {"name": "ecc", "memory_total_mib": 1000,
     "timeline": [{"at_s": 0, "errors": {"ecc_corrected_volatile": 5}},
                  {"at_s": 20, "errors": {"ecc_uncorrected_volatile": 2,
                                          "ecc_uncorrected_aggregate": 3}}]},
    {"name": "xid", "memory_total_mib": 1000,
     "timeline": [{"at_s": 0}, {"at_s": 10, "xid": 48}, {"at_s": 15},
                  {"at_s": 25, "xid": 13}]},
    {"name": "warned", "memory_total_mib": 1000,
     "timeline": [{"at_s": 0, "xid": 13, "errors": {"pcie_replays": 7,
                   "clock_event_reasons": 64, "remapped_rows_corrected": 1}}]},
    {"name": "remap", "memory_total_mib": 1000, "unsupported": ["ecc", "xid_events"],
     "timeline": [{"at_s": 0, "errors": {"remap_pending": true}}]}]})");
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok());
  fake.SetTime(5);
  std::vector<GpuSnapshot> early = *(*backend)->Snapshot();
  EXPECT_EQ(early[0].health, GpuHealth::kOk);  // corrected errors only warn
  EXPECT_EQ(early[0].errors.ecc_corrected_volatile.value(), 5u);
  EXPECT_EQ(early[1].health, GpuHealth::kOk);
  EXPECT_EQ(early[1].errors.xid_count.value(), 0u);
  EXPECT_EQ(early[2].health, GpuHealth::kOk);  // an application's Xid, and warnings
  EXPECT_EQ(early[2].errors.last_xid.value(), 13u);
  EXPECT_EQ(early[2].errors.pcie_replays.value(), 7u);
  EXPECT_EQ(early[2].errors.clock_event_reasons.value(), 64u);
  EXPECT_EQ(early[3].health, GpuHealth::kFaulty);
  EXPECT_THAT(early[3].health_detail, HasSubstr("row remap is pending: reset the GPU"));
  EXPECT_EQ(early[3].errors.ecc_uncorrected_volatile.why(), Unreadable::kNotSupported);
  EXPECT_EQ(early[3].errors.last_xid.why(), Unreadable::kNotSupported);

  fake.SetTime(12);
  std::vector<GpuSnapshot> xid = *(*backend)->Snapshot();
  EXPECT_EQ(xid[1].health, GpuHealth::kFaulty);
  EXPECT_THAT(xid[1].health_detail, HasSubstr("Xid 48"));
  // Delivered once, kept after its frame has passed.
  fake.SetTime(30);
  std::vector<GpuSnapshot> late = *(*backend)->Snapshot();
  // The crashing program's own Xid 13 came after: the 48 still decides.
  EXPECT_EQ(late[1].errors.last_xid.value(), 13u);
  EXPECT_EQ(late[1].errors.fatal_xid.value(), 48u);
  EXPECT_EQ(late[1].errors.xid_count.value(), 2u);
  EXPECT_EQ(late[1].health, GpuHealth::kFaulty);
  EXPECT_EQ(late[0].health, GpuHealth::kFaulty);
  EXPECT_THAT(late[0].health_detail,
              HasSubstr("2 uncorrected ECC error(s) since the driver loaded"));
  EXPECT_EQ(late[0].errors.ecc_uncorrected_aggregate.value(), 3u);
}

TEST_P(NvmlVariantTest, ManyProcessesGrowTheBuffer) {
  std::string procs;
  for (int i = 1; i <= 150; ++i) {
    procs += (i > 1 ? "," : "") + std::string("{\"pid\": ") + std::to_string(1000 + i) +
             ", \"used_memory_mib\": " + std::to_string(i) + "}";
  }
  FakeNvml fake(GetParam(),
                "{\"gpus\": [{\"name\": \"A\", \"memory_total_mib\": 80000, "
                "\"timeline\": [{\"at_s\": 0, \"processes\": [" +
                    procs + "]}]}]}");
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok());
  auto snap = (*backend)->Snapshot();
  ASSERT_TRUE(snap.ok());
  const std::vector<GpuProcess>& list = (*snap)[0].processes.value();
  ASSERT_EQ(list.size(), 150u);
  EXPECT_EQ(list.front().pid, 1001u);
  EXPECT_EQ(list.back().pid, 1150u);
  EXPECT_EQ(list.back().used_memory.value(), core::Bytes::MiB(150));
}

TEST_P(NvmlVariantTest, ScenarioTopology) {
  FakeNvml fake(GetParam(), R"({"gpus": [
    {"name": "A", "memory_total_mib": 1}, {"name": "A", "memory_total_mib": 1},
    {"name": "A", "memory_total_mib": 1}, {"name": "A", "memory_total_mib": 1}],
    "topology": {"nvlink": [[0, 1]], "pcie_switch": [[0, 1]], "host_bridge": [[0, 1, 2]],
                 "numa_node": [[0, 1, 2]]}})");
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok());
  auto links = (*backend)->Topology();
  ASSERT_TRUE(links.ok());
  ASSERT_EQ(links->size(), 6u);
  EXPECT_EQ((*links)[0].pcie.value(), PcieLevel::kSinglePcieSwitch);  // 0-1
  EXPECT_TRUE((*links)[0].nvlink.value());
  EXPECT_EQ((*links)[1].pcie.value(), PcieLevel::kHostBridge);  // 0-2
  EXPECT_FALSE((*links)[1].nvlink.value());
  EXPECT_EQ((*links)[2].pcie.value(), PcieLevel::kCrossSocket);  // 0-3
}

INSTANTIATE_TEST_SUITE_P(DriverEras, NvmlVariantTest, ::testing::ValuesIn(kAllVariants));

// Which symbol each era resolves to: the newest it has.
TEST(NvmlLoaderTest, ResolvesNewestSymbolsFirst) {
  struct Expect {
    const char* variant;
    std::vector<const char*> resolved;
    std::vector<const char*> not_resolved;
    nvml::ProcessInfoLayout layout;
  };
  const Expect cases[] = {
      {"legacy",
       {"nvmlInit", "nvmlDeviceGetCount", "nvmlDeviceGetHandleByIndex", "nvmlDeviceGetMemoryInfo",
        "nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetTemperature",
        "nvmlDeviceGetPciInfo_v2", "nvmlSystemGetCudaDriverVersion"},
       {"nvmlInit_v2", "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetTemperatureV"},
       nvml::ProcessInfoLayout::kV1},
      {"v2",
       {"nvmlInit_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
        "nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetPciInfo_v3",
        "nvmlDeviceGetMemoryInfo", "nvmlSystemGetCudaDriverVersion_v2"},
       {"nvmlInit", "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetComputeRunningProcesses_v3"},
       nvml::ProcessInfoLayout::kV2},
      {"modern",
       {"nvmlInit_v2", "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetTemperatureV"},
       {"nvmlDeviceGetComputeRunningProcesses_v2"},  // _v3 found first
       nvml::ProcessInfoLayout::kV2},
      {"r535",
       {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetTemperature"},
       {"nvmlDeviceGetTemperatureV"},
       nvml::ProcessInfoLayout::kR535},
  };
  for (const Expect& c : cases) {
    FakeNvml fake(c.variant, "demo");
    auto backend = fake.Open();
    ASSERT_TRUE(backend.ok()) << c.variant << ": " << backend.status().ToString();
    const nvml::NvmlLibrary& lib = (*backend)->library();
    std::vector<std::string> resolved = lib.resolved();
    for (const char* s : c.resolved) EXPECT_THAT(resolved, Contains(s)) << c.variant;
    for (const char* s : c.not_resolved) EXPECT_THAT(resolved, Not(Contains(s))) << c.variant;
    EXPECT_EQ(lib.compute_processes.layout, c.layout) << c.variant;
    EXPECT_EQ(lib.graphics_processes.layout, c.layout) << c.variant;
  }
}

// A driver whose symbols suggest 24-byte entries but that writes 32: read at
// 24 bytes, every entry after the first would be garbage; the plausibility
// check decodes them at 32.
TEST(NvmlLoaderTest, PlausibilityCheckCatchesAMisdetectedLayout) {
  FakeNvml fake("r535_misdetected", kFields);
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok());
  EXPECT_EQ((*backend)->library().compute_processes.layout, nvml::ProcessInfoLayout::kV2);
  auto snap = (*backend)->Snapshot();
  ASSERT_TRUE(snap.ok());
  const std::vector<GpuProcess>& list = (*snap)[0].processes.value();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].pid, 100u);
  EXPECT_EQ(list[1].pid, 200u);
  EXPECT_EQ(list[2].pid, 300u);
  EXPECT_EQ(list[2].used_memory.value(), core::Bytes::MiB(30000));
}

TEST(NvmlLoaderTest, NoLibraryMeansNoDriver) {
  auto backend = NvmlBackend::Create("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), core::StatusCode::kUnavailable);
  EXPECT_THAT(backend.status().message(), HasSubstr("no NVIDIA driver found"));
  EXPECT_THAT(backend.status().message(), HasSubstr("--fake demo"));
}

TEST(NvmlLoaderTest, ALibraryThatIsNotNvml) {
  auto backend = NvmlBackend::Create("libc.so.6");
  ASSERT_FALSE(backend.ok());
  EXPECT_THAT(backend.status().message(), HasSubstr("lacks the basic NVML entry points"));
}

TEST(NvmlLoaderTest, DriverNotLoaded) {
  FakeNvml fake("modern", R"({"driver": {"init_error": "DRIVER_NOT_LOADED"}, "gpus": []})");
  auto backend = fake.Open();
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), core::StatusCode::kUnavailable);
  EXPECT_THAT(backend.status().message(), HasSubstr("DRIVER_NOT_LOADED"));
  EXPECT_THAT(backend.status().message(), HasSubstr("lsmod"));
}

TEST(NvmlLoaderTest, DriverLibraryMismatch) {
  FakeNvml fake("modern", R"({"driver": {"init_error": "LIB_RM_VERSION_MISMATCH"}, "gpus": []})");
  auto backend = fake.Open();
  ASSERT_FALSE(backend.ok());
  EXPECT_THAT(backend.status().message(), HasSubstr("reboot"));
}

TEST(NvmlLoaderTest, NoGpusIsNotAnError) {
  FakeNvml fake("modern", R"({"gpus": []})");
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok());
  EXPECT_TRUE((*backend)->Snapshot()->empty());
}

}  // namespace
}  // namespace gleaner::gpu
