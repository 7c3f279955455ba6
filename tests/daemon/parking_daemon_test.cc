// Parking end to end in `gleaner up`'s loop: a forgotten holder is told,
// parked (its GPU memory moved to host memory by the CUDA driver), its GPU
// lent whole, and restored when its process uses the CPU again, the job on
// its GPU gone first. Real pieces throughout: a real holder process, the
// real NVML and CUDA loaders (over the fake libnvidia-ml.so.1 and
// libcuda.so.1, which share the processes' CUDA states), the store, the
// sampler, the executor's real job process and the coordinator's
// scheduler.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <thread>

#include "agent/executor.h"
#include "agent/holder_parker.h"
#include "agent/process_info.h"
#include "daemon/daemon_rig.h"
#include "daemon/local_cluster.h"
#include "gpu/cuda/checkpoint_api.h"
#include "gpu/cuda/fake_cuda_state.h"
#include "store/sqlite_store.h"
#include "testing/fake_nvml.h"
#include "testing/temp_dir.h"

namespace gleaner::daemon {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// A notebook kernel: asleep until `wake` exists, then computing on the CPU
// (as a kernel running a cell does before its first CUDA call blocks).
pid_t StartHolder(const std::string& wake) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string body =
        "while :; do if [ -e '" + wake + "' ]; then :; else sleep 0.05; fi; done";
    execl("/bin/sh", "sh", "-c", body.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// The holder on an 80 GB GPU, computing nothing; the fake NVML lists it
// while its CUDA state is running.
std::string HeldGpu(pid_t holder) {
  return R"({"gpus": [{"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81920,
     "timeline": [{"at_s": 0, "utilization_gpu_pct": 0, "memory_used_mib": 1500,
       "processes": [{"pid": )" +
         std::to_string(holder) + R"(, "used_memory_mib": 1024, "sm_util_pct": 0}]}]}]})";
}

// The same GPU, whose frames from 1000 s on show another process filling
// it while the holder is parked (the holder is not listed: it is off the
// GPU), and from 2000 s on the holder alone again.
std::string GpuFilledWhileParked(pid_t holder) {
  const std::string alone = R"({"utilization_gpu_pct": 0, "memory_used_mib": 1500,
       "processes": [{"pid": )" +
                            std::to_string(holder) +
                            R"(, "used_memory_mib": 1024, "sm_util_pct": 0}]})";
  const std::string filled = R"({"at_s": 1000, "utilization_gpu_pct": 0, "memory_used_mib": 81500,
       "processes": [{"pid": )" +
                             std::to_string(getpid()) +
                             R"(, "used_memory_mib": 81000, "sm_util_pct": 0}]})";
  return R"({"gpus": [{"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81920, "timeline": [)" +
         std::string(alone).insert(1, R"("at_s": 0, )") + ", " + filled + ", " +
         std::string(alone).insert(1, R"("at_s": 2000, )") + "]}]}";
}

std::string FakeCuda() { return std::string(GLEANER_FAKE_CUDA_DIR) + "/checkpoint/libcuda.so.1"; }

constexpr const char* kFakeCudaEnv[] = {"GLEANER_FAKE_CUDA_PIDS", "GLEANER_FAKE_CUDA_STATE",
                                        "GLEANER_FAKE_CUDA_FAIL", "GLEANER_FAKE_CUDA_COPY_MS",
                                        "GLEANER_FAKE_CUDA_COPY_FILE"};

struct ParkingRig {
  // `scenario`: the fake GPU, given the holder's pid.
  explicit ParkingRig(const std::function<std::string(pid_t)>& scenario = HeldGpu)
      : wake((dir.path() / "wake").string()),
        holder(StartHolder(wake)),
        store(std::move(store::SqliteStore::Open(":memory:")).value()),
        nvml("modern", scenario(holder)),
        executor(real_clock),
        cluster(*store, executor, clock, ClusterOptionsIn(dir.path()), [](const std::string&) {}) {
    setenv("GLEANER_FAKE_CUDA_PIDS", std::to_string(holder).c_str(), 1);
    setenv("GLEANER_FAKE_CUDA_STATE", (dir.path() / "cuda-states").c_str(), 1);
    unsetenv("GLEANER_FAKE_CUDA_FAIL");
    unsetenv("GLEANER_FAKE_CUDA_COPY_MS");
    unsetenv("GLEANER_FAKE_CUDA_COPY_FILE");
    auto opened = nvml.Open();
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    backend = std::move(opened).value();
    auto driver = gpu::CudaCheckpoint::Open(FakeCuda());
    EXPECT_TRUE(driver.ok()) << driver.status().ToString();
    cuda = std::move(driver).value();
    sampler.emplace(*backend, procfs, store.get(), clock, SamplerOptions());
    sampler->WatchLending([this] { return cluster.LentGpus(); });
    cluster.Recover([](const std::string&) {});
    cluster.ReportTo(&metrics);
    parker = NewParker();
  }
  ~ParkingRig() {
    // Jobs outlive their daemon by design; not a test's.
    for (const auto& [id, job] : executor.running()) executor.Signal(id, SIGKILL).IgnoreError();
    if (waitpid(holder, nullptr, WNOHANG) == 0) {  // not reaped yet: its pid is still its own
      kill(holder, SIGKILL);
      waitpid(holder, nullptr, 0);
    }
    for (const char* v : kFakeCudaEnv) {
      unsetenv(v);
    }
  }

  // A parker as a (re)started daemon makes it, watched by the sampler.
  std::unique_ptr<agent::HolderParker> NewParker() {
    observe::ParkingConfig c;
    c.enabled = true;
    c.park_idle_timeout = core::Seconds(120);
    c.notice = core::Seconds(60);
    c.host_memory_margin_share = 0.01;
    auto p = std::make_unique<agent::HolderParker>(
        cuda.get(), clock,
        agent::HolderParkerOptions{c, (dir.path() / "parked-holders.json").string()});
    p->ReportTo(&metrics);
    p->NotifyThrough([this](const std::vector<observe::AlertEvent>& e) {
      told.insert(told.end(), e.begin(), e.end());
    });
    p->RecordThrough(
        [this](const std::string& kind, const core::GpuUuid& gpu, const std::string& user,
               const std::string&) { recorded.push_back(kind + " " + gpu.str() + " " + user); });
    sampler->WatchParking([raw = p.get()] { return raw->Parkings(); });
    return p;
  }

  static agent::SamplerOptions SamplerOptions() {
    agent::SamplerOptions o;
    o.idle.held_idle_after = core::Seconds(60);
    o.idle.idle_after = core::Seconds(60);
    o.colocation.reset();  // parking alone
    return o;
  }
  sched::JobId Submit() {
    return store
        ->Submit("tester", static_cast<uint32_t>(geteuid()), CheckpointingJob(), clock.Now())
        ->id;
  }

  // `step` later, one pass: the daemon's loop (agent and coordinator, then
  // the parker), with what it logged kept.
  observe::Verdict Tick(core::Duration step = core::Seconds(10)) {
    clock.Advance(step);
    auto pass = sampler->SampleOnce();
    EXPECT_TRUE(pass.ok()) << pass.status().ToString();
    const cluster::Log to_log = [this](const std::string& line) { log += line + "\n"; };
    cluster.Act(*pass, to_log);
    parker->Step(*pass, cluster.LentGpus(), to_log);
    metrics.Observe(*pass, core::Seconds(30));
    return pass->verdicts.at(0);
  }

  int CudaState() const {
    return gpu::FakeCudaStates(
        (dir.path() / "cuda-states").string())[static_cast<uint32_t>(holder)];
  }
  std::string HolderUser() const { return agent::UserName(static_cast<uint32_t>(geteuid())); }
  std::string Pid() const { return std::to_string(holder); }

  testing::TempDir dir;
  std::string wake;
  pid_t holder;
  core::ManualClock clock{core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000)};
  core::RealClock real_clock;
  std::unique_ptr<store::SqliteStore> store;
  testing::FakeNvml nvml;
  std::unique_ptr<gpu::NvmlBackend> backend;
  std::unique_ptr<gpu::CudaCheckpoint> cuda;
  agent::ProcfsInspector procfs;
  std::optional<agent::Sampler> sampler;
  agent::Executor executor;
  LocalCluster cluster;
  agent::HostMetrics metrics{"node1"};
  std::unique_ptr<agent::HolderParker> parker;
  std::vector<std::string> recorded;  // the history's parks and restores
  std::vector<observe::AlertEvent> told;
  std::string log;
};

// Passes until the log says `text` (at most `limit`).
void TickUntil(ParkingRig& rig, const std::string& text, int limit,
               core::Duration step = core::Seconds(10)) {
  for (int i = 0; i < limit && rig.log.find(text) == std::string::npos; ++i) rig.Tick(step);
}

TEST(ParkingDaemonTest, AForgottenHolderIsToldParkedLentWholeAndRestoredWhenItWakes) {
  ParkingRig rig;
  const sched::JobId job = rig.Submit();
  // Held idle after 60 s, told after 120 s more, parked 60 s later.
  TickUntil(rig, "parking notice", 40);
  EXPECT_THAT(rig.log, HasSubstr("parking notice: process " + rig.Pid() + " of " +
                                 rig.HolderUser() + " has held 1.0 GiB idle for 2m"));
  ASSERT_FALSE(rig.told.empty());
  EXPECT_EQ(rig.told[0].rule, "holder_parking_notice");
  EXPECT_TRUE(rig.told[0].firing);
  EXPECT_EQ(rig.told[0].users, std::vector<std::string>{rig.HolderUser()});
  observe::Verdict v = rig.Tick();
  EXPECT_EQ(v.state, observe::GpuState::kHeldIdle);
  EXPECT_THAT(v.evidence.reason, HasSubstr("to be parked in 50s"));
  EXPECT_EQ(rig.store->Get(job)->state, store::JobState::kQueued);  // held: not lendable

  TickUntil(rig, "parked process", 10);
  EXPECT_THAT(rig.log, HasSubstr("parked process " + rig.Pid() + " of " + rig.HolderUser() +
                                 " on " + v.uuid.str() + ": 1.0 GiB moved to host memory"));
  EXPECT_EQ(rig.CudaState(), CU_PROCESS_STATE_CHECKPOINTED);
  EXPECT_THAT(testing::Slurp(rig.dir.path() / "parked-holders.json"),
              HasSubstr("\"pid\":" + rig.Pid()));

  // Off the GPU: idle at once, and the queued job gets it whole.
  v = rig.Tick();
  EXPECT_EQ(rig.store->Get(job)->state, store::JobState::kRunning) << rig.log;
  ASSERT_TRUE(v.evidence.parking.has_value());
  EXPECT_EQ(v.evidence.parking->phase, observe::HolderParking::Phase::kParked);
  v = rig.Tick();
  EXPECT_EQ(v.state, observe::GpuState::kHarvested) << v.evidence.reason;

  // The notebook runs a cell: its process computes on the CPU. Passes
  // come as fast as the clock says, so its share of a CPU is what a busy
  // machine gives it.
  { std::ofstream(rig.wake) << "x"; }
  for (int i = 0; i < 50 && rig.log.find("restoring process") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    rig.Tick(core::Milliseconds(200));
  }
  EXPECT_THAT(rig.log, HasSubstr("restoring process " + rig.Pid()));
  EXPECT_THAT(rig.log, HasSubstr("uses the CPU again: it woke"));
  std::filesystem::remove(rig.wake);
  // The job leaves on its checkpoint signal, then the holder comes back.
  for (int i = 0; i < 100 && rig.log.find(" restored: ") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    rig.Tick(core::Seconds(1));
  }
  const size_t ended = rig.log.find("job " + std::to_string(job) + " ended");
  const size_t restored = rig.log.find("process " + rig.Pid() + " of " + rig.HolderUser() + " on " +
                                       v.uuid.str() + " restored: 1.0 GiB back");
  ASSERT_NE(ended, std::string::npos) << rig.log;
  ASSERT_NE(restored, std::string::npos) << rig.log;
  EXPECT_LT(ended, restored) << "the holder was restored before the job left:\n" << rig.log;
  EXPECT_THAT(testing::Slurp(rig.dir.path() / "logs" / (std::to_string(job) + ".out")),
              HasSubstr("checkpoint"));
  EXPECT_EQ(rig.CudaState(), CU_PROCESS_STATE_RUNNING);
  EXPECT_EQ(kill(rig.holder, 0), 0) << "the holder was killed";
  EXPECT_THAT(testing::Slurp(rig.dir.path() / "parked-holders.json"),
              Not(HasSubstr("\"pid\":" + rig.Pid())));

  // Back on the GPU, it is the GPU's owner again.
  v = rig.Tick(core::Seconds(1));
  EXPECT_EQ(v.state, observe::GpuState::kBusy) << v.evidence.reason;
  const std::string exposition = rig.metrics.Render({}, {}, false);
  for (const char* event : {"notice", "parked", "restored"}) {
    EXPECT_THAT(exposition, HasSubstr(std::string("gleaner_holder_parking_total{event=\"") + event +
                                      "\"} 1\n"));
  }
  EXPECT_THAT(exposition, HasSubstr("gleaner_holder_restore_wait_seconds_count 1"));
  EXPECT_THAT(exposition, HasSubstr("gleaner_preemptions_total{reason=\"owner_returned\"} 1\n"));
  EXPECT_THAT(rig.recorded, ElementsAre("parked " + v.uuid.str() + " " + rig.HolderUser(),
                                        "restored " + v.uuid.str() + " " + rig.HolderUser()));
}

// A real driver took 43 s to move 80 GiB to host memory: the passes go on
// meanwhile, with the GPU held (not lent before the memory has left it).
TEST(ParkingDaemonTest, ALongParkGoesOnBesideThePassesWithItsGpuHeld) {
  ParkingRig rig;
  setenv("GLEANER_FAKE_CUDA_COPY_MS", "3000", 1);
  setenv("GLEANER_FAKE_CUDA_COPY_FILE", rig.wake.c_str(), 1);  // the holder computes meanwhile
  const sched::JobId job = rig.Submit();
  TickUntil(rig, "moving to host memory", 40);
  ASSERT_THAT(rig.log, HasSubstr("parking process " + rig.Pid() + " of " + rig.HolderUser()));
  EXPECT_THAT(rig.log, HasSubstr("the other GPUs are served meanwhile"));
  EXPECT_EQ(rig.log.find("parked process"), std::string::npos) << rig.log;
  EXPECT_EQ(rig.CudaState(), CU_PROCESS_STATE_LOCKED) << "the pass waited for the driver";
  observe::Verdict v = rig.Tick(core::Seconds(1));
  EXPECT_EQ(v.state, observe::GpuState::kHeldIdle) << v.evidence.reason;
  EXPECT_THAT(v.evidence.reason, HasSubstr("is being parked"));
  ASSERT_TRUE(v.evidence.parking.has_value());
  EXPECT_EQ(v.evidence.parking->phase, observe::HolderParking::Phase::kParking);
  EXPECT_EQ(rig.store->Get(job)->state, store::JobState::kQueued);

  for (int i = 0; i < 200 && rig.CudaState() != CU_PROCESS_STATE_CHECKPOINTED; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (int i = 0; i < 50 && rig.log.find("parked process") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    rig.Tick(core::Seconds(1));
  }
  ASSERT_THAT(rig.log, HasSubstr("parked process " + rig.Pid()));
  rig.Tick(core::Seconds(1));
  EXPECT_EQ(rig.store->Get(job)->state, store::JobState::kRunning) << rig.log;
}

// A park done within its pass: the CPU time the driver's copy spent in the
// holder's process before the pass ended is not the holder waking.
TEST(ParkingDaemonTest, TheDriversCopyInTheHoldersProcessIsNotAWake) {
  ParkingRig rig;
  setenv("GLEANER_FAKE_CUDA_COPY_MS", "150", 1);
  setenv("GLEANER_FAKE_CUDA_COPY_FILE", rig.wake.c_str(), 1);  // the holder computes meanwhile
  TickUntil(rig, "parked process", 40);
  ASSERT_THAT(rig.log, HasSubstr("parked process " + rig.Pid())) << rig.log;
  // Passes as far apart as the time passed: a holder computing since the
  // park would use most of a CPU.
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    rig.Tick(core::Milliseconds(150));
  }
  EXPECT_EQ(rig.log.find("restoring process"), std::string::npos) << rig.log;
  EXPECT_EQ(rig.CudaState(), CU_PROCESS_STATE_CHECKPOINTED);
}

TEST(ParkingDaemonTest, ARestartedDaemonFindsItsParkedHolderAndOnlyItsUserMayUnparkIt) {
  ParkingRig rig;
  TickUntil(rig, "parked process", 40);
  ASSERT_EQ(rig.CudaState(), CU_PROCESS_STATE_CHECKPOINTED) << rig.log;

  // The daemon is killed and started again.
  rig.log.clear();
  rig.parker = rig.NewParker();
  rig.parker->Recover([&](const std::string& line) { rig.log += line + "\n"; });
  EXPECT_THAT(rig.log, HasSubstr("process " + rig.Pid() + " of " + rig.HolderUser() + " on "));
  EXPECT_THAT(rig.log, HasSubstr("still parked (1.0 GiB in host memory)"));
  observe::Verdict v = rig.Tick();
  EXPECT_EQ(v.state, observe::GpuState::kIdle) << v.evidence.reason;

  core::Status other = rig.parker->Unpark("0", "mallory", false);
  EXPECT_EQ(other.code(), core::StatusCode::kPermissionDenied);
  EXPECT_THAT(other.message(), HasSubstr("only they (or root) may keep or unpark it"));
  EXPECT_EQ(rig.parker->Unpark("7", rig.HolderUser(), false).code(), core::StatusCode::kNotFound);
  ASSERT_TRUE(rig.parker->Unpark("0", rig.HolderUser(), false).ok());
  rig.Tick();
  EXPECT_THAT(rig.log, HasSubstr("restoring process " + rig.Pid()));
  EXPECT_THAT(rig.log, HasSubstr("asked to unpark"));
  EXPECT_EQ(rig.CudaState(), CU_PROCESS_STATE_RUNNING) << rig.log;
  EXPECT_EQ(rig.parker->Unpark("0", rig.HolderUser(), false).code(), core::StatusCode::kNotFound);
}

TEST(ParkingDaemonTest, AHolderThatAsksToKeepItsGpuIsNotParked) {
  ParkingRig rig;
  TickUntil(rig, "parking notice", 40);
  EXPECT_EQ(rig.parker->Keep("0", "mallory", false).code(), core::StatusCode::kPermissionDenied);
  ASSERT_TRUE(rig.parker->Keep("0", rig.HolderUser(), false).ok());
  rig.Tick();
  EXPECT_THAT(rig.log, HasSubstr("not parked: the holder asked to keep it"));
  for (int i = 0; i < 30; ++i) rig.Tick();
  EXPECT_EQ(rig.log.find("parked process"), std::string::npos) << rig.log;
  EXPECT_THAT(rig.metrics.Render({}, {}, false),
              HasSubstr("gleaner_holder_parking_total{event=\"refused\"} 1\n"));
}

TEST(ParkingDaemonTest, AHolderWhoseWorkDoesNotFinishIsLeftRunning) {
  ParkingRig rig;
  setenv("GLEANER_FAKE_CUDA_FAIL", "lock_timeout", 1);
  TickUntil(rig, "could not park", 40);
  EXPECT_THAT(rig.log, HasSubstr("did not finish within 10000 ms: it is not idle; left running"));
  EXPECT_EQ(rig.CudaState(), CU_PROCESS_STATE_RUNNING);
  EXPECT_EQ(rig.Tick().state, observe::GpuState::kHeldIdle);
  EXPECT_THAT(rig.metrics.Render({}, {}, false),
              HasSubstr("gleaner_holder_parking_total{event=\"park_failed\"} 1\n"));
}

TEST(ParkingDaemonTest, ADaemonKilledMidParkLetsItsHolderGoAndForgetsOneThatExited) {
  ParkingRig rig;
  TickUntil(rig, "parked process", 40);
  ASSERT_EQ(rig.CudaState(), CU_PROCESS_STATE_CHECKPOINTED) << rig.log;
  // Killed between the lock and the checkpoint: the driver holds the
  // holder locked, and the state file says a park was under way.
  std::ofstream(rig.dir.path() / "cuda-states") << rig.Pid() << " " << CU_PROCESS_STATE_LOCKED;
  const std::string record = testing::Slurp(rig.dir.path() / "parked-holders.json");
  ASSERT_NE(record.find("\"done\":true"), std::string::npos) << record;
  std::ofstream(rig.dir.path() / "parked-holders.json")
      << std::string(record).replace(record.find("\"done\":true"), 11, "\"done\":false");
  rig.log.clear();
  rig.parker = rig.NewParker();
  rig.parker->Recover([&](const std::string& line) { rig.log += line + "\n"; });
  EXPECT_THAT(rig.log, HasSubstr("was left locked mid-park: unlocked, it runs on"));
  EXPECT_EQ(rig.CudaState(), CU_PROCESS_STATE_RUNNING);
  EXPECT_THAT(testing::Slurp(rig.dir.path() / "parked-holders.json"),
              Not(HasSubstr("\"pid\":" + rig.Pid())));

  // Parked again, then the holder exits while the daemon is down.
  TickUntil(rig, "parked process", 40);
  ASSERT_EQ(rig.CudaState(), CU_PROCESS_STATE_CHECKPOINTED) << rig.log;
  kill(rig.holder, SIGKILL);
  waitpid(rig.holder, nullptr, 0);
  rig.log.clear();
  rig.parker = rig.NewParker();
  rig.parker->Recover([&](const std::string& line) { rig.log += line + "\n"; });
  EXPECT_THAT(rig.log, HasSubstr("exited while gleaner was down: nothing to restore"));
  EXPECT_TRUE(rig.parker->Parkings().empty());

  // A record that cannot be read is kept aside for a person, never
  // overwritten by the next park.
  std::ofstream(rig.dir.path() / "parked-holders.json") << "{\"parked\": [{\"pid\": \"x\"}]}";
  rig.log.clear();
  rig.parker = rig.NewParker();
  rig.parker->Recover([&](const std::string& line) { rig.log += line + "\n"; });
  EXPECT_THAT(rig.log, HasSubstr("parked-holders.json is malformed"));
  EXPECT_THAT(rig.log, HasSubstr("cuda-checkpoint --toggle --pid PID"));
  EXPECT_THAT(testing::Slurp(rig.dir.path() / "parked-holders.json.malformed"),
              HasSubstr("\"pid\": \"x\""));
}

// A restore waits until what the holder held fits in what the GPU has
// free (a driver's restore that fails for want of memory can break every
// later restore of that process), and says so where people look.
TEST(ParkingDaemonTest, ARestoreWaitsForTheMemoryItNeedsAndSaysWhy) {
  ParkingRig rig(GpuFilledWhileParked);
  rig.nvml.SetTime(0);
  TickUntil(rig, "parked process", 40);
  ASSERT_EQ(rig.CudaState(), CU_PROCESS_STATE_CHECKPOINTED) << rig.log;

  rig.nvml.SetTime(1000);  // another process fills the GPU
  rig.Tick();
  ASSERT_TRUE(rig.parker->Unpark("0", rig.HolderUser(), false).ok());
  observe::Verdict v;
  for (int i = 0; i < 3; ++i) v = rig.Tick();
  EXPECT_THAT(rig.log, HasSubstr("restoring process " + rig.Pid() + " of " + rig.HolderUser() +
                                 " on " + v.uuid.str() +
                                 " waits: it needs 1.0 GiB on the GPU, "
                                 "which has 420 MiB free: waiting for process " +
                                 std::to_string(getpid())));
  EXPECT_EQ(rig.CudaState(), CU_PROCESS_STATE_CHECKPOINTED) << "restored into a full GPU";
  EXPECT_EQ(rig.metrics.Render({}, {}, false).find("event=\"restore_failed\"} 1"),
            std::string::npos);
  ASSERT_TRUE(v.evidence.parking.has_value());
  EXPECT_EQ(v.evidence.parking->phase, observe::HolderParking::Phase::kRestoring);
  EXPECT_THAT(v.evidence.parking->waiting, HasSubstr("which has 420 MiB free"));
  EXPECT_THAT(v.evidence.reason,
              HasSubstr("is being restored (asked to unpark); it needs 1.0 GiB"));

  rig.nvml.SetTime(2000);  // the other process is gone
  TickUntil(rig, " restored: ", 5);
  EXPECT_EQ(rig.CudaState(), CU_PROCESS_STATE_RUNNING) << rig.log;
  EXPECT_EQ(rig.log.find("waits:", rig.log.find("waits:") + 1), std::string::npos)
      << "the wait was said more than once:\n"
      << rig.log;
}

// The driver fails every restore: tried again after a back-off that
// doubles, alerted again while it lasts, until root gives up on the holder
// (left frozen for its user to end), which the history records.
TEST(ParkingDaemonTest, AFailingRestoreBacksOffAlertsAgainAndRootMayGiveUp) {
  ParkingRig rig;
  TickUntil(rig, "parked process", 40);
  ASSERT_EQ(rig.CudaState(), CU_PROCESS_STATE_CHECKPOINTED) << rig.log;
  setenv("GLEANER_FAKE_CUDA_FAIL", "restore", 1);
  ASSERT_TRUE(rig.parker->Unpark("0", rig.HolderUser(), false).ok());
  const auto failures = [&] {
    size_t n = 0;
    for (size_t at = rig.log.find(" failed ("); at != std::string::npos;
         at = rig.log.find(" failed (", at + 1)) {
      ++n;
    }
    return n;
  };
  observe::Verdict v = rig.Tick();
  EXPECT_THAT(rig.log, HasSubstr(" failed (1 time): "));
  EXPECT_THAT(rig.log, HasSubstr("; tried again in 30s"));
  v = rig.Tick();  // 10 s later: within the back-off
  EXPECT_EQ(failures(), 1u) << rig.log;
  EXPECT_THAT(v.evidence.reason, HasSubstr("its restore failed 1 time ("));
  EXPECT_EQ(v.state, observe::GpuState::kBusy) << "held for its holder meanwhile";
  // Two hours of passes 30 s apart: tried 30 s, 1, 2, 4, 8, 16 minutes
  // apart, then every half hour (each pass, before, tried it again).
  for (int i = 0; i < 240; ++i) rig.Tick(core::Seconds(30));
  EXPECT_GE(failures(), 7u) << rig.log;
  EXPECT_LE(failures(), 11u) << rig.log;
  EXPECT_THAT(rig.log, HasSubstr(" failed (2 times): "));
  EXPECT_THAT(rig.log, HasSubstr("; tried again in 30m00s"));
  size_t alerts = 0;
  for (const observe::AlertEvent& e : rig.told) {
    if (e.rule == "holder_restore_failed" && e.firing) ++alerts;
  }
  EXPECT_EQ(alerts, 2u) << "said at the first failure and again an hour on";
  EXPECT_EQ(rig.CudaState(), CU_PROCESS_STATE_CHECKPOINTED);

  // Giving up is root's; the holder stays frozen, its GPU free.
  const core::Status own = rig.parker->GiveUp("0", rig.HolderUser(), false, false);
  EXPECT_EQ(own.code(), core::StatusCode::kPermissionDenied);
  EXPECT_THAT(own.message(), HasSubstr("only root (an admin) may give up"));
  ASSERT_TRUE(rig.parker->GiveUp("0", "root", true, false).ok());
  rig.told.clear();
  v = rig.Tick();
  EXPECT_THAT(rig.log,
              HasSubstr("root gave up restoring process " + rig.Pid() + " of " + rig.HolderUser() +
                        " on " + v.uuid.str() + ": left frozen with 1.0 GiB in host memory for " +
                        rig.HolderUser() + " to end (`kill " + rig.Pid() + "`)"));
  EXPECT_EQ(rig.CudaState(), CU_PROCESS_STATE_CHECKPOINTED);
  EXPECT_EQ(kill(rig.holder, 0), 0) << "the holder was killed";
  EXPECT_TRUE(rig.parker->Parkings().empty());
  EXPECT_THAT(testing::Slurp(rig.dir.path() / "parked-holders.json"),
              Not(HasSubstr("\"pid\":" + rig.Pid())));
  EXPECT_THAT(rig.recorded,
              ElementsAre("parked " + v.uuid.str() + " " + rig.HolderUser(),
                          "parking_given_up " + v.uuid.str() + " " + rig.HolderUser()));
  bool resolved = false;
  for (const observe::AlertEvent& e : rig.told) {
    resolved = resolved || (e.rule == "holder_restore_failed" && !e.firing);
  }
  EXPECT_TRUE(resolved) << "the restore alert was left firing";
  EXPECT_THAT(rig.metrics.Render({}, {}, false),
              HasSubstr("gleaner_holder_parking_total{event=\"given_up\"} 1\n"));
  for (int i = 0; i < 7; ++i) v = rig.Tick();
  EXPECT_EQ(v.state, observe::GpuState::kIdle) << v.evidence.reason;
  EXPECT_EQ(rig.parker->GiveUp("0", "root", true, false).code(), core::StatusCode::kNotFound);
}

// A holder that exits while its failed restore backs off is forgotten with
// its trouble: the alert resolved, the GPU free, nothing tried again.
TEST(ParkingDaemonTest, AHolderThatExitsDuringItsRestoreBackOffTakesItsAlertWithIt) {
  ParkingRig rig;
  TickUntil(rig, "parked process", 40);
  ASSERT_EQ(rig.CudaState(), CU_PROCESS_STATE_CHECKPOINTED) << rig.log;
  setenv("GLEANER_FAKE_CUDA_FAIL", "restore", 1);
  ASSERT_TRUE(rig.parker->Unpark("0", rig.HolderUser(), false).ok());
  rig.Tick();
  ASSERT_THAT(rig.log, HasSubstr(" failed (1 time): "));
  kill(rig.holder, SIGKILL);
  waitpid(rig.holder, nullptr, 0);
  rig.told.clear();
  rig.log.clear();
  observe::Verdict v = rig.Tick();
  EXPECT_THAT(rig.log, HasSubstr("exited while parked: nothing to restore"));
  bool resolved = false;
  for (const observe::AlertEvent& e : rig.told) {
    resolved = resolved || (e.rule == "holder_restore_failed" && !e.firing);
  }
  EXPECT_TRUE(resolved) << "the restore alert was left firing";
  for (int i = 0; i < 10; ++i) v = rig.Tick(core::Seconds(30));
  EXPECT_THAT(rig.log, Not(HasSubstr(" failed (2 times)")));
  EXPECT_FALSE(v.evidence.parking.has_value());
  EXPECT_THAT(v.evidence.reason, Not(HasSubstr("its restore failed")));
  EXPECT_TRUE(rig.parker->Parkings().empty());
}

TEST(ParkingDaemonTest, RootMayEndAParkedHolderItGivesUpOn) {
  ParkingRig rig;
  TickUntil(rig, "parked process", 40);
  ASSERT_EQ(rig.CudaState(), CU_PROCESS_STATE_CHECKPOINTED) << rig.log;
  ASSERT_TRUE(rig.parker->Ask(observe::HolderAsk::kKill, "0", "root", true).ok());
  rig.Tick();
  EXPECT_THAT(rig.log, HasSubstr("root gave up restoring process " + rig.Pid()));
  EXPECT_THAT(rig.log, HasSubstr(": ended (SIGKILL); its GPU is free"));
  int status = 0;
  ASSERT_EQ(waitpid(rig.holder, &status, 0), rig.holder);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(rig.parker->Parkings().empty());
}

}  // namespace
}  // namespace gleaner::daemon
