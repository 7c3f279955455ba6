// The daemon and the simulator decide alike: one scenario of owners coming
// and going runs through `gleaner up`'s loop (daemon::LocalCluster with
// simulated GPUs, the real store, real job processes) and through the
// harvest replay (sim::RunHarvest on a virtual clock), and the two decision
// logs (which job starts on which GPU when, which is vacated when) must be
// the same line for line.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>

#include "agent/executor.h"
#include "daemon/local_cluster.h"
#include "gpu/fake_backend.h"
#include "sim/harvest.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace gleaner::daemon {
namespace {

// GPU 0: quiet; bob trains 320-400 and 1000-1100. GPU 1: carol trains
// until 500 and again 900-950.
constexpr const char* kScenario = R"({"gpus": [
  {"uuid": "GPU-parity-0", "name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920, "timeline": [
     {"at_s": 0},
     {"at_s": 320, "utilization_gpu_pct": 95, "memory_used_mib": 30000,
      "processes": [{"pid": 4242, "used_memory_mib": 30000, "user": "bob"}]},
     {"at_s": 400, "utilization_gpu_pct": 0, "memory_used_mib": 0, "processes": []},
     {"at_s": 1000, "utilization_gpu_pct": 90, "memory_used_mib": 20000,
      "processes": [{"pid": 4243, "used_memory_mib": 20000, "user": "bob"}]},
     {"at_s": 1100, "utilization_gpu_pct": 0, "memory_used_mib": 0, "processes": []}]},
  {"uuid": "GPU-parity-1", "name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920, "timeline": [
     {"at_s": 0, "utilization_gpu_pct": 99, "memory_used_mib": 70000,
      "processes": [{"pid": 5555, "used_memory_mib": 70000, "user": "carol"}]},
     {"at_s": 500, "utilization_gpu_pct": 0, "memory_used_mib": 0, "processes": []},
     {"at_s": 900, "utilization_gpu_pct": 97, "memory_used_mib": 70000,
      "processes": [{"pid": 5556, "used_memory_mib": 70000, "user": "carol"}]},
     {"at_s": 950, "utilization_gpu_pct": 0, "memory_used_mib": 0, "processes": []}]}]})";
constexpr int kSeconds = 1500;
constexpr int kJobs = 2;

// The scenario's frames as the simulator's owner timeline: one node.
sim::OwnerTimeline TimelineOf(const gpu::Scenario& scenario) {
  sim::OwnerTimeline t;
  t.name = "parity";
  t.start_s = 0;
  t.end_s = kSeconds;
  t.node_gpus = {static_cast<int>(scenario.gpus.size())};
  for (const gpu::ScenarioGpu& g : scenario.gpus) {
    std::vector<sim::OwnerSegment> segs;
    for (const gpu::ScenarioFrame& f : g.timeline) {
      sim::OwnerSegment s;
      s.at_s = static_cast<int64_t>(f.at_s);
      s.has_data = true;
      s.utilization_pct = f.utilization_gpu_pct;
      for (const gpu::ScenarioProcess& p : f.processes) {
        s.memory_bytes += static_cast<int64_t>(p.used_memory.count());
      }
      s.owner_process = !f.processes.empty();
      segs.push_back(s);
    }
    t.gpus.push_back(std::move(segs));
  }
  return t;
}

std::vector<std::string> DaemonDecisions(const gpu::Scenario& scenario) {
  testing::TempDir dir;
  core::ManualClock clock(core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000));
  auto store = store::SqliteStore::Open(":memory:");
  EXPECT_TRUE(store.ok());
  agent::ProcfsInspector procfs;
  agent::ScenarioProcessInspector inspector(scenario, procfs);
  auto backend = gpu::FakeBackend::Create(scenario, clock);
  EXPECT_TRUE(backend.ok());
  agent::Sampler sampler(**backend, inspector, nullptr, clock, {});
  core::RealClock real_clock;
  agent::Executor executor(real_clock);
  LocalClusterOptions options;
  options.log_dir = dir.path().string();
  options.state_path = (dir.path() / "agent-jobs.json").string();
  const cluster::Log quiet = [](const std::string&) {};
  LocalCluster cluster(**store, executor, clock, options, quiet);
  std::map<std::string, int> gpu_index;
  for (size_t i = 0; i < scenario.gpus.size(); ++i) {
    gpu_index[scenario.gpus[i].uuid] = static_cast<int>(i);
  }
  sched::JobSpec spec;
  spec.command = {"sh", "-c", "trap 'exit 0' USR1; while true; do sleep 0.02; done"};
  spec.working_dir = "/tmp";
  spec.checkpoint_signal = SIGUSR1;
  spec.grace = core::Seconds(20);
  spec.priority_class = sched::PriorityClass::kOpportunistic;
  std::vector<sched::JobId> ids;
  for (int j = 0; j < kJobs; ++j) {
    ids.push_back((*store)->Submit("tester", geteuid(), spec, clock.Now())->id);
  }

  std::vector<std::string> decisions;
  std::vector<store::JobState> was(kJobs, store::JobState::kQueued);
  for (int t = 0; t < kSeconds; ++t) {
    core::Status store_status;
    auto pass = sampler.SampleOnce(&store_status);
    if (!pass.ok()) {
      ADD_FAILURE() << pass.status().ToString();
      break;
    }
    cluster.Act(*pass, quiet);
    bool vacating = false;
    for (int j = 0; j < kJobs; ++j) {
      const auto job = (*store)->Get(ids[static_cast<size_t>(j)]);
      if (job->state == store::JobState::kRunning && was[static_cast<size_t>(j)] != job->state) {
        std::string line = std::to_string(t) + " start job " + std::to_string(j) + " on gpus";
        for (size_t i = 0; i < job->gpus.size(); ++i) {
          line += (i == 0 ? " " : ",") + std::to_string(gpu_index.at(job->gpus[i].str()));
        }
        decisions.push_back(line);
      }
      if (job->state == store::JobState::kVacating && was[static_cast<size_t>(j)] != job->state) {
        decisions.push_back(std::to_string(t) + " vacate job " + std::to_string(j));
      }
      vacating |= job->state == store::JobState::kVacating;
      was[static_cast<size_t>(j)] = job->state;
    }
    // Simulated seconds pass in microseconds: a vacated job gets real time
    // to take its signal and leave before the next pass, as it would in a
    // second of real time.
    if (vacating) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    clock.Advance(core::Seconds(1));
  }
  for (sched::JobId id : ids) executor.Signal(id, SIGKILL).IgnoreError();
  return decisions;
}

std::vector<std::string> SimulatorDecisions(const gpu::Scenario& scenario) {
  sim::HarvestConfig config;
  config.policy = sim::HarvestPolicy::kGleaner;
  config.vacate_s = 1;  // the daemon sees the exit at its next pass
  config.record_decisions = true;
  std::vector<sim::HarvestJob> queue(kJobs, sim::HarvestJob{0, 1'000'000, 1, "tester", {}});
  auto r = sim::RunHarvest(TimelineOf(scenario), queue, config);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->decisions : std::vector<std::string>{};
}

TEST(HarvestParityTest, TheDaemonAndTheSimulatorMakeTheSameDecisions) {
  auto scenario = gpu::ParseScenario(kScenario, "parity");
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  const std::vector<std::string> sim = SimulatorDecisions(*scenario);
  const std::vector<std::string> daemon = DaemonDecisions(*scenario);
  // Worked out: GPU 0 is idle after 300 s of watching; bob takes it back at
  // 320; quiet from his last busy second (399) it is idle again at 699.
  // GPU 1 is idle 300 s after carol's last busy second (499), at 799; she
  // is back at 900. Bob is back on GPU 0 at 1000, gone after 1099, so it is
  // idle at 1399. GPU 1, quiet again from 950 (its last busy second 949),
  // is idle at 1249: the pause model has seen one pause like this one end
  // within its 10-minute horizon (carol's last), too few to doubt it.
  const std::vector<std::string> expected = {
      "300 start job 0 on gpus 0",  "320 vacate job 0",          "699 start job 0 on gpus 0",
      "799 start job 1 on gpus 1",  "900 vacate job 1",          "1000 vacate job 0",
      "1249 start job 0 on gpus 1", "1399 start job 1 on gpus 0"};
  EXPECT_EQ(sim, expected);
  EXPECT_EQ(daemon, sim);
}

}  // namespace
}  // namespace gleaner::daemon
