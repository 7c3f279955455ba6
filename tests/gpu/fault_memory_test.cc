// Fatal Xids kept across restarts: what FaultMemory writes, reads back,
// forgets at a reboot or when told, and refuses.
#include "gpu/fault_memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/private_file.h"
#include "testing/temp_dir.h"

namespace gleaner::gpu {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The driver as the wrapped backend: two GPUs whose readings the test sets.
class ScriptedBackend final : public GpuBackend {
 public:
  ScriptedBackend() {
    for (const char* uuid : {"GPU-a", "GPU-b"}) {
      GpuSnapshot s;
      s.index = static_cast<uint32_t>(gpus.size());
      s.uuid = core::GpuUuid(uuid);
      s.errors.fatal_xid = s.errors.last_xid = Reading<uint32_t>::Of(0);
      gpus.push_back(s);
    }
  }
  const DriverInfo& Driver() const override { return driver; }
  core::Result<std::vector<GpuSnapshot>> Snapshot() override {
    std::vector<GpuSnapshot> out = gpus;
    for (GpuSnapshot& s : out) JudgeErrors(s);
    return out;
  }
  core::Result<std::vector<GpuLink>> Topology() override { return std::vector<GpuLink>{}; }

  DriverInfo driver;
  std::vector<GpuSnapshot> gpus;
};

struct Harness {
  testing::TempDir dir;
  std::string path = (dir.path() / "gpu-faults.json").string();
  core::ManualClock clock{core::FromUnixMicros(1'800'000'000'000'000)};
  std::vector<std::string> logged;

  // A daemon in boot `boot` that heard Xid `xid` on GPU 0, then stopped.
  void HeardXid(const std::string& boot, uint32_t xid) {
    auto [memory, driver] = Start(boot);
    driver->gpus[0].errors.fatal_xid = Reading<uint32_t>::Of(xid);
    ASSERT_TRUE(memory->Snapshot().ok());
  }

  // A daemon starting in boot `boot`, and the driver it sees.
  std::pair<std::unique_ptr<FaultMemory>, ScriptedBackend*> Start(const std::string& boot) {
    auto inner = std::make_unique<ScriptedBackend>();
    ScriptedBackend* driver = inner.get();
    return {std::make_unique<FaultMemory>(std::move(inner), path, boot, clock,
                                          [this](const std::string& l) { logged.push_back(l); }),
            driver};
  }
};

TEST(FaultMemoryTest, AFatalXidOutlivesTheDaemonThatSawIt) {
  Harness h;
  {
    auto [memory, driver] = h.Start("boot-1");
    driver->gpus[0].errors.fatal_xid = Reading<uint32_t>::Of(79);
    driver->gpus[1].errors.last_xid = Reading<uint32_t>::Of(13);  // the application's
    auto gpus = memory->Snapshot();
    ASSERT_TRUE(gpus.ok());
    EXPECT_EQ((*gpus)[0].health, GpuHealth::kFaulty);
  }
  auto file = ReadFaultFile(h.path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->boot_id, "boot-1");
  ASSERT_EQ(file->faults.size(), 1u);
  EXPECT_EQ(file->faults[0].uuid.str(), "GPU-a");
  EXPECT_EQ(file->faults[0].xid, 79u);
  EXPECT_EQ(file->faults[0].seen_unix_s, 1'800'000'000);

  // Restarted in the same boot: the driver no longer reports the Xid.
  h.clock.Advance(core::Seconds(3600));
  auto [memory, driver] = h.Start("boot-1");
  auto gpus = memory->Snapshot();
  ASSERT_TRUE(gpus.ok());
  EXPECT_EQ((*gpus)[0].health, GpuHealth::kFaulty);
  EXPECT_EQ((*gpus)[0].errors.fatal_xid.value_or(0), 79u);
  EXPECT_THAT((*gpus)[0].health_detail, HasSubstr("Xid 79"));
  EXPECT_THAT((*gpus)[0].health_detail, HasSubstr("gleaner gpus --forget-fault GPU-a"));
  EXPECT_EQ((*gpus)[1].health, GpuHealth::kOk);
  ASSERT_FALSE(h.logged.empty());
  EXPECT_THAT(h.logged.back(), HasSubstr("GPU-a is faulty: the driver reported Xid 79 1h"));
}

TEST(FaultMemoryTest, ARememberedXidJoinsOtherFaultsAndALiveOneWins) {
  Harness h;
  h.HeardXid("boot-1", 48);
  auto [memory, driver] = h.Start("boot-1");
  // Faulty already for ECC errors: the Xid is added to the reasons.
  driver->gpus[0].errors.ecc_uncorrected_volatile = Reading<uint64_t>::Of(2);
  // A newer Xid on the other GPU, live.
  driver->gpus[1].errors.fatal_xid = Reading<uint32_t>::Of(94);
  auto gpus = memory->Snapshot();
  ASSERT_TRUE(gpus.ok());
  EXPECT_THAT((*gpus)[0].health_detail, HasSubstr("uncorrected ECC"));
  EXPECT_THAT((*gpus)[0].health_detail, HasSubstr("Xid 48"));
  EXPECT_EQ((*gpus)[1].errors.fatal_xid.value_or(0), 94u);
  auto file = ReadFaultFile(h.path);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->faults.size(), 2u);
}

TEST(FaultMemoryTest, ARebootForgetsEveryFault) {
  Harness h;
  h.HeardXid("boot-1", 79);
  auto [memory, driver] = h.Start("boot-2");
  EXPECT_THAT(memory->remembered(), IsEmpty());
  auto gpus = memory->Snapshot();
  ASSERT_TRUE(gpus.ok());
  EXPECT_EQ((*gpus)[0].health, GpuHealth::kOk);
  ASSERT_FALSE(h.logged.empty());
  EXPECT_THAT(h.logged.back(), HasSubstr("forgetting 1 GPU fault(s) recorded before"));
  auto file = ReadFaultFile(h.path);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->boot_id, "boot-2");
  EXPECT_THAT(file->faults, IsEmpty());
}

TEST(FaultMemoryTest, AFaultForgottenWhileADaemonRunsStaysForgotten) {
  Harness h;
  auto [memory, driver] = h.Start("boot-1");
  driver->gpus[0].errors.fatal_xid = Reading<uint32_t>::Of(79);
  ASSERT_TRUE(memory->Snapshot().ok());

  EXPECT_EQ(ForgetFaults(h.path, "GPU-b").status().code(), core::StatusCode::kNotFound);
  EXPECT_THAT(ForgetFaults(h.path, "GPU-b").status().message(),
              HasSubstr("faults are remembered for GPU-a"));
  auto forgotten = ForgetFaults(h.path, "GPU-a");
  ASSERT_TRUE(forgotten.ok()) << forgotten.status().ToString();
  ASSERT_EQ(forgotten->size(), 1u);
  EXPECT_EQ((*forgotten)[0].xid, 79u);

  // The daemon still hears the Xid live, and then a fault on the other GPU:
  // its write keeps the first one forgotten.
  driver->gpus[1].errors.fatal_xid = Reading<uint32_t>::Of(62);
  ASSERT_TRUE(memory->Snapshot().ok());
  auto file = ReadFaultFile(h.path);
  ASSERT_TRUE(file.ok());
  ASSERT_EQ(file->faults.size(), 1u);
  EXPECT_EQ(file->faults[0].uuid.str(), "GPU-b");
  EXPECT_EQ(ForgetFaults(h.path, "all").value().size(), 1u);
}

TEST(FaultMemoryTest, AnUnreadableFileIsMovedAsideNotWrittenOver) {
  Harness h;
  h.dir.Write("gpu-faults.json", R"({"boot_id": "boot-1", "faults": [{"uuid": "GPU-a"}]})");
  auto [memory, driver] = h.Start("boot-1");
  ASSERT_FALSE(h.logged.empty());
  EXPECT_THAT(h.logged[0], HasSubstr("is not a GPU fault file: a fault needs \"uuid\", \"xid\""));
  EXPECT_THAT(h.logged[0], HasSubstr("moved to " + h.path + ".corrupt"));
  EXPECT_TRUE(std::filesystem::exists(h.path + ".corrupt"));
  EXPECT_FALSE(std::filesystem::exists(h.path));

  for (const char* bad :
       {"[]", R"({"faults": []})", R"({"boot_id": "x", "faults": {}})",
        R"({"boot_id": "x", "faults": [{"uuid": "", "xid": 1, "seen_unix_s": 0}]})",
        R"({"boot_id": "x", "faults": [{"uuid": "G", "xid": 0, "seen_unix_s": 0}]})",
        R"({"boot_id": "x", "faults": [{"uuid": "G", "xid": -4, "seen_unix_s": 0}]})",
        R"({"boot_id": "x", "faults": [{"uuid": "G", "xid": 5000000000, "seen_unix_s": 0}]})",
        R"({"boot_id": "x", "faults": [{"uuid": "G", "xid": 1, "seen_unix_s": 1e300}]})",
        R"({"boot_id": "x", "faults": [{"uuid": "G", "xid": 1, "seen_unix_s": -5}]})",
        "{\"boot_id\": "}) {
    h.dir.Write("bad.json", bad);
    EXPECT_EQ(ReadFaultFile((h.dir.path() / "bad.json").string()).status().code(),
              core::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(FaultMemoryTest, ALinkPlantedAtThePathIsNeitherReadNorFollowed) {
  Harness h;
  const std::string target = h.dir.Write("elsewhere", "precious\n");
  std::filesystem::create_symlink(target, h.path);
  auto [memory, driver] = h.Start("boot-1");
  driver->gpus[0].errors.fatal_xid = Reading<uint32_t>::Of(79);
  ASSERT_TRUE(memory->Snapshot().ok());
  EXPECT_EQ(testing::Slurp(target), "precious\n");
  ASSERT_FALSE(h.logged.empty());
  EXPECT_THAT(h.logged.back(), HasSubstr("cannot read " + h.path));
  EXPECT_FALSE(ForgetFaults(h.path, "all").ok());
  EXPECT_EQ(testing::Slurp(target), "precious\n");
}

}  // namespace
}  // namespace gleaner::gpu
