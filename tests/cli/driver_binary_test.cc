// A real driver or a clear error: `gleaner up` runs on simulated GPUs only
// where it is asked to, or where a person starts it on a host with no sign
// of NVIDIA hardware, and says so loudly. A driver that fails (each of
// NVML's init errors, from the fake libnvidia-ml.so.1 through the real
// loader) stops it with NVML's code, what it means and the fix; and a data
// dir never mixes simulated history with a real host's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using testing::Gleaner;
using ::testing::HasSubstr;
using ::testing::Not;

// Started by a person: whatever service manager runs the tests is not the
// daemon's.
constexpr const char* kByHand = "env -u INVOCATION_ID -u NOTIFY_SOCKET";

std::string FakeDriver(const testing::TempDir& dir, const std::string& init_error) {
  const std::string scenario =
      R"({"name": "driver", )" +
      (init_error.empty() ? std::string()
                          : R"("driver": {"init_error": ")" + init_error + "\"}, ") +
      R"("gpus": [{"name": "H100", "memory_total_mib": 81559,
          "uuid": "GPU-00000000-0000-4000-8000-0000000000d1"}]})";
  return std::string(kByHand) + " LD_LIBRARY_PATH=" + GLEANER_FAKE_NVML_DIR +
         "/modern GLEANER_FAKE_NVML_SCENARIO=" +
         dir.Write("driver-" + init_error + ".json", scenario);
}

bool NvidiaHardwareHere() {
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/dev", ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().filename().string().starts_with("nvidia")) return true;
  }
  return std::filesystem::exists("/proc/driver/nvidia", ec);
}

// Before: each of these ran eight simulated H100s and wrote their history
// into the host's store.
TEST(DriverBinaryTest, ADriverThatFailsStopsUpWithNvmlsCodeAndTheFix) {
  testing::TempDir dir;
  const struct {
    const char* error;
    const char* fix;
  } kErrors[] = {
      {"DRIVER_NOT_LOADED", "lsmod | grep nvidia"},
      {"LIB_RM_VERSION_MISMATCH", "reboot the host"},
      {"NO_PERMISSION", "/dev/nvidia* permissions"},
      {"UNKNOWN", "`nvidia-smi` and dmesg say more"},
  };
  for (const auto& e : kErrors) {
    const std::string data = (dir.path() / e.error).string();
    const testing::Outcome up =
        Gleaner("up --data-dir " + data + " --listen none --for 2", FakeDriver(dir, e.error));
    EXPECT_EQ(up.rc, 3) << e.error << ": " << up.err;
    EXPECT_THAT(up.err, HasSubstr(std::string("nvmlInit failed: ") + e.error)) << up.err;
    EXPECT_THAT(up.err, HasSubstr(e.fix)) << up.err;
    EXPECT_THAT(up.err, HasSubstr("is installed, so gleaner does not run on simulated GPUs"));
    EXPECT_THAT(up.err, HasSubstr("pass --fake demo to try gleaner on simulated GPUs"));
    EXPECT_THAT(up.err, Not(HasSubstr("SIMULATED")));
    EXPECT_FALSE(std::filesystem::exists(data + "/gpu-source")) << "it wrote as if it ran";
  }
}

TEST(DriverBinaryTest, UpSimulatesOnlyByHandWhereThereIsNoNvidiaHardware) {
  if (NvidiaHardwareHere()) GTEST_SKIP() << "this host has NVIDIA hardware";
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string no_driver = " --nvml-library /nonexistent/libnvidia-ml.so.1";
  const testing::Outcome by_hand =
      Gleaner("up --data-dir " + data + " --listen none --for 1" + no_driver, kByHand);
  EXPECT_EQ(by_hand.rc, 0) << by_hand.err;
  EXPECT_THAT(by_hand.err, HasSubstr("running on SIMULATED GPUs (--fake demo)"));

  // As a service, or configured: an admin's daemon, which must not pretend.
  const testing::Outcome service = Gleaner(
      "up --data-dir " + data + " --listen none --for 1" + no_driver, "INVOCATION_ID=0123abcd");
  EXPECT_EQ(service.rc, 3);
  EXPECT_THAT(service.err, HasSubstr("it runs as a service ($INVOCATION_ID is set)"));
  const std::string config = dir.Write("gleaner.toml", "[idle]\nidle_after_s = 60\n");
  const testing::Outcome configured = Gleaner(
      "up --data-dir " + data + " --config " + config + " --listen none --for 1" + no_driver,
      kByHand);
  EXPECT_EQ(configured.rc, 3);
  EXPECT_THAT(configured.err, HasSubstr("it has a config file"));

  // Its simulated history is never mixed with a real driver's.
  const testing::Outcome real =
      Gleaner("up --data-dir " + data + " --listen none --for 1", FakeDriver(dir, ""));
  EXPECT_EQ(real.rc, 4);
  EXPECT_THAT(real.err, HasSubstr("holds history read from simulated GPUs (--fake), and this "
                                  "gleaner reads the NVIDIA driver (NVML)"));
  const testing::Outcome accepted = Gleaner(
      "up --data-dir " + data + " --listen none --for 1 --accept-gpu-source", FakeDriver(dir, ""));
  EXPECT_EQ(accepted.rc, 0) << accepted.err;
  EXPECT_EQ(testing::Slurp(std::filesystem::path(data) / "gpu-source"), "nvml\n");
  EXPECT_EQ(Gleaner("up --data-dir " + data + " --listen none --for 1 --fake demo", kByHand).rc, 4);
}

}  // namespace
}  // namespace gleaner
