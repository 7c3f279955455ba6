// A failing GPU as gleaner up sees it through the real NVML loader and the
// fake driver: faults injected in the scenario make it unhealthy with the
// reason, jobs never land on it, and /metrics says why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "net/http_client.h"
#include "testing/gleaner_up.h"
#include "testing/run_gleaner.h"
#include "testing/spawn_daemon.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using nlohmann::json;
using testing::Gleaner;
using ::testing::HasSubstr;

constexpr const char* kScenario = R"({"name": "failing", "gpus": [
  {"name": "H100", "memory_total_mib": 81559, "uuid": "GPU-00000000-0000-4000-8000-00000000000a",
   "timeline": [{"at_s": 0, "errors": {"ecc_uncorrected_volatile": 2}}]},
  {"name": "H100", "memory_total_mib": 81559, "uuid": "GPU-00000000-0000-4000-8000-00000000000b",
   "timeline": [{"at_s": 0, "xid": 48}]},
  {"name": "H100", "memory_total_mib": 81559, "uuid": "GPU-00000000-0000-4000-8000-00000000000c",
   "timeline": [{"at_s": 0, "errors": {"pcie_replays": 7, "clock_event_reasons": 64}}]},
  {"name": "H100", "memory_total_mib": 81559, "uuid": "GPU-00000000-0000-4000-8000-00000000000d",
   "timeline": [{"at_s": 0, "xid": 13}]}]})";

TEST(GpuHealthBinaryTest, AFaultyGpuIsUnhealthyWithItsReasonAndNeverLent) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string config =
      dir.Write("g.toml", "[idle]\nidle_after_s = 1\n[sampling]\ninterval_s = 0.2\n");
  const std::string env = std::string("LD_LIBRARY_PATH=") + GLEANER_FAKE_NVML_DIR +
                          "/modern GLEANER_FAKE_NVML_SCENARIO=" + dir.Write("s.json", kScenario);
  const std::string pid_file = (dir.path() / "up.pid").string();
  ASSERT_EQ(std::system((env + " " + GLEANER_BINARY + " up --data-dir " + data + " --config " +
                         config + " --for 60 >" + (dir.path() / "up.log").string() +
                         " 2>&1 & echo $! >" + pid_file)
                            .c_str()),
            0);
  const testing::KillOnExit daemon(pid_file);
  for (int i = 0; i < 400 && !std::filesystem::exists(data + "/gleaner.sock"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(Gleaner("--data-dir " + data + " submit --gpus 1 -- sleep 30").rc, 0)
        << testing::Slurp(dir.path() / "up.log");
  }
  // The two sound GPUs take two jobs; the third waits.
  json jobs;
  for (int i = 0; i < 400; ++i) {
    jobs = json::parse(Gleaner("--data-dir " + data + " queue --json").out)["jobs"];
    int running = 0;
    for (const json& j : jobs) running += j["state"] == "running" ? 1 : 0;
    if (running == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // time for a wrong placement
  jobs = json::parse(Gleaner("--data-dir " + data + " queue --json").out)["jobs"];
  std::set<std::string> used;
  int queued = 0;
  for (const json& j : jobs) {
    if (j["state"] == "queued") ++queued;
    for (const json& g : j["gpus"]) used.insert(g.get<std::string>());
  }
  EXPECT_EQ(queued, 1) << jobs.dump();
  EXPECT_EQ(used, (std::set<std::string>{"GPU-00000000-0000-4000-8000-00000000000c",
                                         "GPU-00000000-0000-4000-8000-00000000000d"}))
      << jobs.dump();

  const json gpus = json::parse(Gleaner("--data-dir " + data + " gpus --json").out)["gpus"];
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(gpus[0]["health"], "faulty");
  EXPECT_EQ(gpus[0]["verdict"]["state"], "unhealthy");
  EXPECT_THAT(gpus[0]["verdict"]["evidence"]["reason"].get<std::string>(),
              HasSubstr("GPU unhealthy: 2 uncorrected ECC error(s) since the driver loaded"));
  EXPECT_EQ(gpus[0]["errors"]["ecc_uncorrected_volatile"], 2);
  EXPECT_EQ(gpus[1]["verdict"]["state"], "unhealthy");
  EXPECT_THAT(gpus[1]["health_detail"].get<std::string>(), HasSubstr("Xid 48"));
  EXPECT_EQ(gpus[1]["errors"]["last_xid"], 48);
  // Warnings and an application's own Xid leave a GPU lendable.
  EXPECT_EQ(gpus[2]["health"], "ok");
  EXPECT_EQ(gpus[2]["errors"]["pcie_replays"], 7);
  EXPECT_EQ(gpus[2]["errors"]["hardware_slowdown"], true);
  EXPECT_EQ(gpus[3]["health"], "ok");
  EXPECT_EQ(gpus[3]["errors"]["last_xid"], 13);

  net::Endpoint socket;
  socket.unix_path = data + "/gleaner.sock";
  auto metrics = net::HttpCall(socket, "GET", "/metrics?dcgm=1", "", "");
  ASSERT_TRUE(metrics.ok()) << metrics.status().ToString();
  EXPECT_THAT(metrics->second,
              ::testing::ContainsRegex("gleaner_gpu_faulty\\{gpu=\"0\"[^}]*\\} 1"));
  EXPECT_THAT(metrics->second,
              ::testing::ContainsRegex("gleaner_gpu_faulty\\{gpu=\"2\"[^}]*\\} 0"));
  EXPECT_THAT(metrics->second,
              ::testing::ContainsRegex("DCGM_FI_DEV_XID_ERRORS\\{gpu=\"1\"[^}]*\\} 48"));
  EXPECT_THAT(metrics->second,
              ::testing::ContainsRegex("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL\\{gpu=\"0\"[^}]*\\} 2"));
}

// GPU 0 raises Xid 79 ten seconds in; the fake driver, like the real one,
// never delivers an Xid raised before the daemon registered for them.
constexpr const char* kLateXid = R"({"name": "late-xid", "gpus": [
  {"name": "H100", "memory_total_mib": 81559, "uuid": "GPU-00000000-0000-4000-8000-0000000000e0",
   "timeline": [{"at_s": 0}, {"at_s": 10, "xid": 79}, {"at_s": 20}]},
  {"name": "H100", "memory_total_mib": 81559, "uuid": "GPU-00000000-0000-4000-8000-0000000000e1",
   "timeline": [{"at_s": 0}]}]})";

// `gleaner up` at scenario time `at_s` until `health` shows on GPU 0 (or
// 20 s pass); then stopped as `systemctl restart` stops it. Returns GPU 0
// as the daemon saw it.
json RunUpUntil(const testing::TempDir& dir, const std::string& data, const std::string& scenario,
                int at_s, const std::string& health) {
  const std::string config =
      dir.Write("g.toml", "[idle]\nidle_after_s = 1\n[sampling]\ninterval_s = 0.2\n");
  const testing::Daemon up = testing::Spawn(
      dir, "up",
      std::string("LD_LIBRARY_PATH=") + GLEANER_FAKE_NVML_DIR +
          "/modern GLEANER_FAKE_NVML_SCENARIO=" + scenario +
          " GLEANER_FAKE_NVML_TIME_S=" + std::to_string(at_s) + " exec " + GLEANER_BINARY +
          " up --data-dir " + data + " --config " + config + " --for 60");
  json gpu = json::object();
  for (int i = 0; i < 400; ++i) {
    const testing::Outcome o = Gleaner("--data-dir " + data + " gpus --json");
    if (o.rc == 0) {
      const json gpus = json::parse(o.out, nullptr, false).value("gpus", json::array());
      if (!gpus.empty()) gpu = gpus[0];
      if (gpu.is_object() && gpu.value("health", "") == health) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(up.pid, SIGTERM);
  for (int i = 0; i < 200 && kill(up.pid, 0) == 0; ++i) {
    waitpid(up.pid, nullptr, WNOHANG);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return gpu;
}

TEST(GpuHealthBinaryTest, AnXidHeardBeforeARestartKeepsTheGpuUnhealthyUntilForgotten) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string scenario = dir.Write("s.json", kLateXid);
  const std::string uuid = "GPU-00000000-0000-4000-8000-0000000000e0";

  // The daemon hears the Xid as it happens...
  json gpu = RunUpUntil(dir, data, scenario, 10, "faulty");
  ASSERT_EQ(gpu.value("health", ""), "faulty") << testing::Slurp(dir.path() / "up.log");
  EXPECT_THAT(testing::Slurp(data + "/gpu-faults.json"), HasSubstr(uuid));

  // ...and after a restart, when the driver will not say it again.
  gpu = RunUpUntil(dir, data, scenario, 25, "faulty");
  ASSERT_EQ(gpu.value("health", ""), "faulty") << testing::Slurp(dir.path() / "up.log");
  EXPECT_EQ(gpu["errors"]["fatal_xid"], 79);
  EXPECT_EQ(gpu["verdict"]["state"], "unhealthy");
  EXPECT_THAT(gpu.value("health_detail", ""), HasSubstr("--forget-fault " + uuid));
  EXPECT_THAT(testing::Slurp(dir.path() / "up.log"),
              HasSubstr("GPU " + uuid + " is faulty: the driver reported Xid 79"));

  // The operator reset it, and says so.
  const testing::Outcome wrong = Gleaner("--data-dir " + data + " gpus --forget-fault GPU-nope");
  EXPECT_EQ(wrong.rc, 1);
  EXPECT_THAT(wrong.err, HasSubstr("no fault is remembered for GPU-nope; faults are remembered "
                                   "for " +
                                   uuid));
  const testing::Outcome forget = Gleaner("--data-dir " + data + " gpus --forget-fault " + uuid);
  EXPECT_EQ(forget.rc, 0) << forget.err;
  EXPECT_THAT(forget.out, HasSubstr("forgot Xid 79 of " + uuid));
  gpu = RunUpUntil(dir, data, scenario, 25, "ok");
  EXPECT_EQ(gpu.value("health", ""), "ok") << testing::Slurp(dir.path() / "up.log");
}

}  // namespace
}  // namespace gleaner
