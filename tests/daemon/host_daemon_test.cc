// RunHostDaemon, `gleaner monitor` and `gleaner up` without the binary: the
// real loop on simulated GPUs, with a data directory of its own, stopped
// by its deadline.
#include "daemon/host_daemon.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "agent/process_info.h"
#include "gpu/fake_backend.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace gleaner::daemon {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

// GPU 0 idle; GPU 1 busy with carol's process.
constexpr const char* kScenario = R"({"gpus": [
  {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920, "timeline": [{"at_s": 0}]},
  {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920,
   "timeline": [{"at_s": 0, "utilization_gpu_pct": 99,
                 "processes": [{"pid": 5555, "used_memory_mib": 70000, "user": "carol"}]}]}]})";

struct Host {
  Host() {
    base.data_dir = dir.path().string();
    base.config_path = (dir.path() / "gleaner.toml").string();
    std::ofstream(base.config_path) << "";
    base.config.sample_interval = std::chrono::milliseconds(100);
    base.config.idle.idle_after = core::Seconds(30);
    base.config.idle.held_idle_after = core::Seconds(30);
  }

  // The simulated GPUs, on `clock`, as `gleaner up --fake` makes them.
  GpuSource Simulated(const core::Clock& clock) {
    auto scenario = gpu::ParseScenario(kScenario, "host");
    EXPECT_TRUE(scenario.ok()) << scenario.status().ToString();
    GpuSource source;
    source.scenario_inspector =
        std::make_unique<agent::ScenarioProcessInspector>(*scenario, procfs);
    source.inspector = source.scenario_inspector.get();
    source.backend =
        std::move(gpu::FakeBackend::Create(std::move(scenario).value(), clock)).value();
    return source;
  }

  testing::TempDir dir;
  agent::ProcfsInspector procfs;
  DaemonBase base;
  std::ostringstream out;
};

TEST(HostDaemonTest, MonitorJudgesAndStoresEveryGpuUntilItsDeadline) {
  Host host;
  core::RealClock clock;
  HostDaemonOptions options;
  options.for_s = 1.0;
  const core::Status run =
      RunHostDaemon(options, host.base, host.Simulated(clock), clock, host.out);
  ASSERT_TRUE(run.ok()) << run.ToString() << "\n" << host.out.str();
  EXPECT_THAT(host.out.str(), HasSubstr("monitoring"));
  EXPECT_THAT(host.out.str(), HasSubstr("stopped"));
  auto store = store::SqliteStore::Open(host.base.data_dir + "/gleaner.db");
  ASSERT_TRUE(store.ok());
  auto verdicts = (*store)->LatestVerdicts();
  ASSERT_TRUE(verdicts.ok());
  ASSERT_THAT(*verdicts, SizeIs(2));
}

TEST(HostDaemonTest, SimulatedGpusAreRefusedWhereRealOnesWroteTheHistory) {
  Host host;
  std::ofstream(host.base.data_dir + "/gpu-source") << "nvml\n";
  core::RealClock clock;
  HostDaemonOptions options;
  options.for_s = 1.0;
  const core::Status run =
      RunHostDaemon(options, host.base, host.Simulated(clock), clock, host.out);
  EXPECT_EQ(run.code(), core::StatusCode::kFailedPrecondition);
  EXPECT_THAT(run.message(), HasSubstr("--accept-gpu-source"));
  EXPECT_THAT(host.out.str(), ::testing::Not(HasSubstr("monitoring")));  // it never started
}

TEST(HostDaemonTest, UpServesTheApiOnItsSocketAndRefusesABadListenAddress) {
  Host host;
  core::RealClock clock;
  HostDaemonOptions options;
  options.up = true;
  options.listen = "not-an-address";
  options.listen_given = true;
  options.for_s = 1.0;
  const core::Status run =
      RunHostDaemon(options, host.base, host.Simulated(clock), clock, host.out);
  EXPECT_EQ(run.code(), core::StatusCode::kInvalidArgument);
  EXPECT_THAT(run.message(), HasSubstr("--listen"));

  Host served;
  options.listen = "none";
  const core::Status up =
      RunHostDaemon(options, served.base, served.Simulated(clock), clock, served.out);
  ASSERT_TRUE(up.ok()) << up.ToString() << "\n" << served.out.str();
  EXPECT_THAT(served.out.str(), HasSubstr("API on "));
  EXPECT_THAT(served.out.str(), HasSubstr(served.base.data_dir + "/gleaner.sock"));
  EXPECT_THAT(served.out.str(), HasSubstr("stopped"));
}

}  // namespace
}  // namespace gleaner::daemon
