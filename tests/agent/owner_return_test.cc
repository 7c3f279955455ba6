// The give-back path with real pieces: a real job process started by the
// Executor (so /proc shows GLEANER_JOB_ID), GPUs from a scenario written
// around its real pid, the Sampler judging, the VacatePlanner deciding, the
// job checkpointing on its signal, and the durable queue requeueing it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/executor.h"
#include "agent/sampler.h"
#include "gpu/fake_backend.h"
#include "sched/vacate.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace gleaner::agent {
namespace {

using ::testing::HasSubstr;

// The process whose parent is `parent` (waits for it to exist).
pid_t ChildOf(pid_t parent) {
  for (int i = 0; i < 500; ++i) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream stat(entry.path() / "stat");
      std::string line;
      std::getline(stat, line);
      // pid (comm) state ppid ...: the command may hold spaces.
      const size_t close = line.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(line.substr(close + 2));
      char state = 0;
      pid_t ppid = 0;
      rest >> state >> ppid;
      if (ppid == parent) return static_cast<pid_t>(std::stoi(name));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

TEST(OwnerReturnTest, JobIsCheckpointedAndRequeuedWhenTheOwnerComesBack) {
  testing::TempDir dir;
  auto store = store::SqliteStore::Open((dir.path() / "gleaner.db").string());
  ASSERT_TRUE(store.ok());
  sched::JobSpec spec;
  spec.command = {"sh", "-c",
                  "trap 'echo checkpointed; exit 0' USR1; echo ready; "
                  "while true; do sleep 0.05; done"};
  spec.working_dir = "/tmp";
  spec.checkpoint_signal = SIGUSR1;
  spec.grace = core::Seconds(30);
  core::ManualClock clock(core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000));
  auto submitted = (*store)->Submit("tester", static_cast<uint32_t>(geteuid()), spec, clock.Now());
  ASSERT_TRUE(submitted.ok());
  const sched::JobId id = submitted->id;

  // Start the job on the GPU (as the daemon would once the GPU is idle).
  const core::GpuUuid gpu("GPU-00000000-0000-4000-8000-000000000000");
  core::RealClock real_clock;
  Executor executor(real_clock);
  auto job = executor.Launch({id,
                              static_cast<uint32_t>(geteuid()),
                              spec,
                              {gpu},
                              (dir.path() / "logs").string(),
                              {},
                              0,
                              {}});
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  for (int i = 0; i < 500 && testing::Slurp(job->stdout_path).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // until its trap is set
  }
  store::JobUpdate start;
  start.gpus = std::vector<core::GpuUuid>{gpu};
  ASSERT_TRUE(
      (*store)->Transition(id, store::JobState::kQueued, store::JobState::kRunning, start).ok());

  // The GPU: the job's real process from the start; bob's from 5 s on.
  // The job's process is the child of its first process (which records
  // how it ends).
  const std::string pid = std::to_string(ChildOf(job->pid));
  auto scenario = gpu::ParseScenario(
      R"({"gpus": [{"name": "A", "memory_total_mib": 80000, "timeline": [
          {"at_s": 0, "utilization_gpu_pct": 90, "processes": [{"pid": )" +
          pid + R"(, "used_memory_mib": 5000}]},
          {"at_s": 5, "processes": [{"pid": )" +
          pid + R"(, "used_memory_mib": 5000},
                                    {"pid": 4242, "used_memory_mib": 20000, "user": "bob",
                                     "command": "python train.py"}]}]}]})",
      "owner-return");
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  ProcfsInspector procfs;
  ScenarioProcessInspector inspector(*scenario, procfs);
  auto backend = gpu::FakeBackend::Create(std::move(scenario).value(), clock);
  ASSERT_TRUE(backend.ok());
  Sampler sampler(**backend, inspector, nullptr, clock, {});
  const auto session = static_cast<uint32_t>(job->pid);  // the keeper's session
  sampler.WatchLending([&] {
    return std::map<core::GpuUuid, LentGpu>{{gpu, {id, session, {}, "", {}, ""}}};
  });
  sched::VacatePlanner planner;

  std::optional<JobExit> exited;
  for (int t = 0; t <= 10 && !exited; ++t) {
    auto pass = sampler.SampleOnce();
    ASSERT_TRUE(pass.ok());
    const observe::Verdict& v = pass->verdicts[0];
    if (t < 5) {
      EXPECT_EQ(v.state, observe::GpuState::kHarvested) << "t=" << t << " " << v.evidence.reason;
    }
    std::map<core::GpuUuid, sched::GpuClaim> claims;
    if (v.evidence.foreign_processes > 0 || v.state == observe::GpuState::kProtected) {
      claims[v.uuid] = {v.uuid, v.evidence.reason};
    }
    for (const sched::VacateAction& a :
         planner.Plan({{id, {gpu}, spec.checkpoint_signal, spec.grace}}, claims, clock.Now())) {
      if (a.kind == sched::VacateAction::Kind::kCheckpoint) {
        EXPECT_EQ(t, 5) << "vacated on the first sample with the owner's process";
        store::JobUpdate vacate;
        vacate.reason = a.reason;
        ASSERT_TRUE(
            (*store)
                ->Transition(id, store::JobState::kRunning, store::JobState::kVacating, vacate)
                .ok());
      }
      ASSERT_TRUE(executor.Signal(id, a.signal).ok());
    }
    for (int i = 0; i < 300 && !exited && planner.IsVacating(id); ++i) {
      for (const JobExit& e : executor.Reap()) {
        if (e.id == id) exited = e;
      }
      if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    clock.Advance(core::Seconds(1));
  }
  ASSERT_TRUE(exited.has_value()) << "the job never left";
  EXPECT_EQ(exited->exit_code, 0);  // it checkpointed and exited on its own, within the grace
  EXPECT_THAT(testing::Slurp(job->stdout_path), HasSubstr("checkpointed"));
  store::JobUpdate requeue;
  requeue.reason = planner.Reason(id);
  auto queued =
      (*store)->Transition(id, store::JobState::kVacating, store::JobState::kQueued, requeue);
  ASSERT_TRUE(queued.ok());
  planner.Forget(id);
  EXPECT_EQ(queued->attempts, 1);
  EXPECT_THAT(queued->reason, HasSubstr("owner returned: process 4242 of bob"));
}

// GLEANER_JOB_ID is a claim anyone can put in their environment: a process
// outside the job's session that names the job is someone else's, and
// takes the GPU back like any owner.
TEST(OwnerReturnTest, AProcessThatOnlyClaimsToBeTheJobIsAnOwner) {
  const pid_t impostor = fork();
  ASSERT_GE(impostor, 0);
  if (impostor == 0) {
    setsid();  // a session of its own, as a job's keeper makes
    char name[] = "GLEANER_JOB_ID=7";
    char* env[] = {name, nullptr};
    char sh[] = "/bin/sh", c[] = "-c", body[] = "sleep 30";
    char* argv[] = {sh, c, body, nullptr};
    execve("/bin/sh", argv, env);
    _exit(127);
  }
  const std::string pid = std::to_string(impostor);
  // Until it has exec'd, its environment is still this test's.
  for (int i = 0; i < 500 && testing::Slurp("/proc/" + pid + "/environ").find("GLEANER_JOB_ID=7") ==
                                 std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto scenario = gpu::ParseScenario(
      R"({"gpus": [{"name": "A", "memory_total_mib": 80000, "timeline": [
          {"at_s": 0, "utilization_gpu_pct": 90, "processes": [{"pid": )" +
          pid + R"(, "used_memory_mib": 5000}]}]}]})",
      "impostor");
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  core::ManualClock clock(core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000));
  auto backend = gpu::FakeBackend::Create(std::move(scenario).value(), clock);
  ASSERT_TRUE(backend.ok());
  const core::GpuUuid gpu = (*backend)->Snapshot()->at(0).uuid;
  ProcfsInspector procfs;
  Sampler sampler(**backend, procfs, nullptr, clock, {});

  // Lent to job 7, started in another session: the process is not its.
  uint32_t job_session = 1;
  sampler.WatchLending([&] {
    return std::map<core::GpuUuid, LentGpu>{{gpu, {7, job_session, {}, "", {}, ""}}};
  });
  observe::Verdict v = sampler.SampleOnce()->verdicts[0];
  EXPECT_EQ(v.state, observe::GpuState::kBusy) << v.evidence.reason;
  EXPECT_THAT(v.evidence.reason, HasSubstr("owner returned: process " + pid));

  // Had gleaner started job 7 in the process's own session, it would be.
  job_session = static_cast<uint32_t>(impostor);
  clock.Advance(core::Seconds(1));
  v = sampler.SampleOnce()->verdicts[0];
  EXPECT_EQ(v.state, observe::GpuState::kHarvested) << v.evidence.reason;
  kill(impostor, SIGKILL);
  waitpid(impostor, nullptr, 0);
}

}  // namespace
}  // namespace gleaner::agent
