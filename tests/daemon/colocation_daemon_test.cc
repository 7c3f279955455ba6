// Co-location end to end in `gleaner up`'s loop: a GPU a quiet notebook
// holds lends the memory it leaves free to a job that declared how much it
// uses; the job runs beside the holder (state shared) and leaves when the
// holder computes again, or is killed when it uses more than it declared.
// Real pieces throughout: the store, the sampler, the executor's real job
// process, the coordinator's scheduler; the GPU is a scenario, and the
// job's process joins it once its pid is known.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "agent/executor.h"
#include "daemon/daemon_rig.h"
#include "daemon/local_cluster.h"
#include "gpu/fake_backend.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace gleaner::daemon {
namespace {

using ::testing::HasSubstr;

// alice's notebook (a scenario pid) holds 30 GB and computes nothing until
// 600 s, when it runs a cell.
constexpr const char* kHeldGpu = R"({"gpus": [
  {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920, "timeline": [
     {"at_s": 0, "memory_used_mib": 30500, "processes": [
       {"pid": 4242, "used_memory_mib": 30000, "sm_util_pct": 0, "user": "alice",
        "command": "python -m ipykernel"}]},
     {"at_s": 600, "utilization_gpu_pct": 80, "processes": [
       {"pid": 4242, "used_memory_mib": 30000, "sm_util_pct": 80, "user": "alice",
        "command": "python -m ipykernel"}]}]}]})";

// The same GPU, whose process list cannot be read from 450 s to 460 s.
const std::string kBlindAt450 =
    std::string(kHeldGpu).insert(std::string(kHeldGpu).find("\"timeline\""),
                                 R"("faults": [{"fields": ["processes"], "error": "UNKNOWN",
                                                "from_s": 450, "to_s": 460}], )");

struct SharedRig {
  explicit SharedRig(const std::string& gpus = kHeldGpu)
      : store(std::move(store::SqliteStore::Open(":memory:")).value()),
        scenario(std::move(gpu::ParseScenario(gpus, "held")).value()),
        inspector(scenario, procfs),
        backend(std::move(gpu::FakeBackend::Create(scenario, clock)).value()),
        sampler(*backend, inspector, store.get(), clock, Options()),
        executor(real_clock),
        cluster(*store, executor, clock, ClusterOptionsIn(dir.path()), [](const std::string&) {}) {
    sampler.WatchLending([this] { return cluster.LentGpus(); });
    cluster.Recover([](const std::string&) {});
  }

  static agent::SamplerOptions Options() {
    agent::SamplerOptions o;
    o.colocation = observe::ColocationConfig{};
    o.colocation->min_history = core::Seconds(120);  // the test's hour
    return o;
  }
  sched::JobId Submit(core::Bytes gpu_memory) {
    sched::JobSpec spec = CheckpointingJob();
    spec.gpu_memory = gpu_memory;
    return store->Submit("tester", static_cast<uint32_t>(geteuid()), spec, clock.Now())->id;
  }

  // One pass; what it logged is kept.
  agent::HostPass Tick() {
    auto pass = sampler.SampleOnce();
    EXPECT_TRUE(pass.ok()) << pass.status().ToString();
    cluster.Act(*pass, [this](const std::string& line) { log += line + "\n"; });
    clock.Advance(core::Seconds(1));
    return *pass;
  }

  store::JobState State(sched::JobId id) { return store->Get(id)->state; }

  testing::TempDir dir;
  core::ManualClock clock{core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000)};
  agent::ProcfsInspector procfs;
  core::RealClock real_clock;
  std::unique_ptr<store::SqliteStore> store;
  gpu::Scenario scenario;
  agent::ScenarioProcessInspector inspector;
  std::unique_ptr<gpu::FakeBackend> backend;
  agent::Sampler sampler;
  agent::Executor executor;
  LocalCluster cluster;
  std::string log;
};

// Runs passes until the job runs (at most `limit`), then puts its process
// on the GPU using `memory`.
void RunUntilStartedAndJoin(SharedRig& rig, sched::JobId id, core::Bytes memory, int limit) {
  for (int t = 0; t < limit && rig.State(id) != store::JobState::kRunning; ++t) rig.Tick();
  ASSERT_EQ(rig.State(id), store::JobState::kRunning) << rig.log;
  const std::optional<int> pid = rig.store->Get(id)->pid;
  ASSERT_TRUE(pid.has_value());
  // A process opens its CUDA context well after exec (before it, /proc
  // shows the launcher's environment): once its trap is set.
  const auto out = rig.dir.path() / "logs" / (std::to_string(id) + ".out");
  for (int i = 0; i < 500 && testing::Slurp(out).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The job's own process (under the executor's keeper, whose pid the
  // store records) is what opens the context.
  const std::string children = testing::Slurp("/proc/" + std::to_string(*pid) + "/task/" +
                                              std::to_string(*pid) + "/children");
  ASSERT_FALSE(children.empty());
  gpu::ScenarioProcess job;
  job.pid = static_cast<uint32_t>(std::stoul(children));
  job.used_memory = memory;
  job.sm_util_pct = 95;
  rig.backend->Join(0, job);
}

TEST(ColocationDaemonTest, AHeldIdleGpuLendsBesideItsHolderAndTheJobLeavesWhenItWakes) {
  SharedRig rig;
  const sched::JobId undeclared = rig.Submit(core::Bytes());
  const sched::JobId declared = rig.Submit(core::Bytes::GiB(20));
  RunUntilStartedAndJoin(rig, declared, core::Bytes::GiB(5), 400);
  // Held idle after 300 s, with 5 minutes of the holder seen: 80 GiB less
  // its peak (30,500 MiB) less the 10 % margin leaves 41 GiB.
  EXPECT_THAT(rig.log, HasSubstr("beside the holder of "));
  EXPECT_EQ(rig.State(undeclared), store::JobState::kQueued);  // needs a whole GPU

  const agent::HostPass shared = rig.Tick();
  ASSERT_EQ(shared.verdicts.size(), 1u);
  const observe::Verdict& v = shared.verdicts[0];
  EXPECT_EQ(v.state, observe::GpuState::kShared) << v.evidence.reason;
  ASSERT_TRUE(v.evidence.beside_holder.has_value());
  EXPECT_EQ(v.evidence.beside_holder->declared, core::Bytes::GiB(20));
  EXPECT_EQ(v.evidence.beside_holder->borrower_memory, core::Bytes::GiB(5));
  EXPECT_EQ(v.evidence.beside_holder->holder_memory, core::Bytes::MiB(30000));
  EXPECT_EQ(v.evidence.beside_holder->holder_peak, core::Bytes::MiB(30500));
  EXPECT_THAT(v.evidence.reason, HasSubstr("uses 5.0 GiB of 20.0 GiB declared beside holder 4242"));
  // /metrics shows the loan.
  agent::HostMetrics metrics("node1");
  metrics.Observe(shared, core::Seconds(30));
  const std::string exposition = metrics.Render({}, {}, false);
  EXPECT_THAT(exposition, HasSubstr("state=\"shared\"} 1\n"));
  EXPECT_THAT(exposition, HasSubstr("gleaner_gpu_lendable_beside_holder_bytes{gpu=\"0\""));
  EXPECT_THAT(exposition,
              HasSubstr("gleaner_gpu_borrower_memory_bytes{gpu=\"0\",uuid=\"" + v.uuid.str() +
                        "\",model=\"NVIDIA A100-SXM4-80GB\","
                        "hostname=\"node1\"} 5368709120\n"));

  // Quiet for as long as the holder is: still shared at 599 s.
  while (rig.clock.Now() < core::FromUnixMicros(int64_t{1'800'000'600} * 1'000'000)) rig.Tick();
  EXPECT_EQ(rig.State(declared), store::JobState::kRunning) << rig.log;

  // alice runs a cell: the job leaves at once, checkpointing on its signal.
  rig.Tick();
  EXPECT_EQ(rig.State(declared), store::JobState::kVacating) << rig.log;
  EXPECT_THAT(rig.log, HasSubstr("holder 4242 computes again: 80%"));
  for (int t = 0; t < 20 && rig.State(declared) != store::JobState::kQueued; ++t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    rig.Tick();
  }
  EXPECT_EQ(rig.State(declared), store::JobState::kQueued) << rig.log;
  EXPECT_THAT(testing::Slurp(rig.dir.path() / "logs" / (std::to_string(declared) + ".out")),
              HasSubstr("ready\ncheckpoint\n"));
  rig.executor.Signal(undeclared, SIGKILL).IgnoreError();
}

TEST(ColocationDaemonTest, ARestartedDaemonStillKnowsTheJobRunsBesideTheHolder) {
  SharedRig rig;
  const sched::JobId id = rig.Submit(core::Bytes::GiB(20));
  RunUntilStartedAndJoin(rig, id, core::Bytes::GiB(5), 400);
  ASSERT_EQ(rig.Tick().verdicts[0].state, observe::GpuState::kShared) << rig.log;

  // The daemon is killed and started again: its agent takes the job back
  // from its state file, loan and all, so the holder is not taken for an
  // owner come back.
  agent::Executor executor(rig.real_clock);
  std::string log;
  LocalCluster again(*rig.store, executor, rig.clock, ClusterOptionsIn(rig.dir.path()),
                     [&](const std::string& line) { log += line + "\n"; });
  again.Recover([&](const std::string& line) { log += line + "\n"; });
  EXPECT_THAT(log, HasSubstr("still running"));
  const auto lent = again.LentGpus();
  ASSERT_EQ(lent.size(), 1u) << log;
  const agent::LentGpu& gpu = lent.begin()->second;
  EXPECT_EQ(gpu.job, id);
  ASSERT_TRUE(gpu.beside_holder.has_value());
  EXPECT_EQ(gpu.beside_holder->holder_pids, std::vector<uint32_t>{4242});
  EXPECT_EQ(gpu.beside_holder->holder_peak, core::Bytes::MiB(30500));
  EXPECT_EQ(gpu.beside_holder->declared, core::Bytes::GiB(20));
  executor.Signal(id, SIGKILL).IgnoreError();
}

TEST(ColocationDaemonTest, AJobBesideAHolderThatUsesMoreThanItDeclaredIsKilledAtOnce) {
  SharedRig rig;
  agent::HostMetrics metrics("node1");
  rig.cluster.ReportTo(&metrics);
  const sched::JobId id = rig.Submit(core::Bytes::GiB(20));
  RunUntilStartedAndJoin(rig, id, core::Bytes::GiB(25), 400);
  rig.Tick();
  for (int t = 0; t < 100 && rig.State(id) == store::JobState::kRunning; ++t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    rig.Tick();
  }
  const auto job = rig.store->Get(id);
  EXPECT_EQ(job->state, store::JobState::kFailed) << rig.log;
  EXPECT_THAT(job->reason, HasSubstr("killed by signal 9: used 25.0 GiB of GPU-"));
  EXPECT_THAT(job->reason, HasSubstr("more than the 20.0 GiB it declared"));
  EXPECT_THAT(metrics.Render({}, {}, false),
              HasSubstr("gleaner_preemptions_total{reason=\"beyond_declared_memory\"} 1\n"));
}

TEST(ColocationDaemonTest, AJobBesideAHolderItCannotSeeLeaves) {
  SharedRig rig(kBlindAt450);
  const sched::JobId id = rig.Submit(core::Bytes::GiB(20));
  RunUntilStartedAndJoin(rig, id, core::Bytes::GiB(5), 400);
  while (rig.clock.Now() < core::FromUnixMicros(int64_t{1'800'000'450} * 1'000'000)) rig.Tick();
  EXPECT_EQ(rig.State(id), store::JobState::kRunning) << rig.log;
  rig.Tick();
  EXPECT_EQ(rig.State(id), store::JobState::kVacating) << rig.log;
  EXPECT_THAT(rig.log, HasSubstr("the holder beside the job cannot be watched"));
  rig.executor.Signal(id, SIGKILL).IgnoreError();
}

}  // namespace
}  // namespace gleaner::daemon
