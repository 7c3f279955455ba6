// Real processes: started as their user in their own process group,
// signalled as a group, reaped with their exit status.
#include "agent/executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "testing/temp_dir.h"
#include "testing/throwaway_user.h"
#include "testing/wait_for_exit.h"

namespace gleaner::agent {
namespace {

using ::testing::HasSubstr;

LaunchRequest Request(sched::JobId id, std::vector<std::string> command, const std::string& logs) {
  LaunchRequest r;
  r.id = id;
  r.uid = static_cast<uint32_t>(geteuid());
  r.spec.command = std::move(command);
  r.spec.working_dir = "/tmp";
  r.gpus = {core::GpuUuid("GPU-aaaa"), core::GpuUuid("GPU-bbbb")};
  r.log_dir = logs;
  return r;
}

// Waits (up to 10 s) for the job to end.
std::optional<JobExit> WaitFor(Executor& e, sched::JobId id) { return testing::WaitForExit(e, id); }

TEST(ExecutorTest, RunsWithGpusAndLogsAndRecordsTheExit) {
  testing::TempDir logs;
  core::RealClock clock;
  Executor e(clock);
  auto job = e.Launch(Request(
      7,
      {"sh", "-c",
       "echo gpus=$CUDA_VISIBLE_DEVICES job=$GLEANER_JOB_ID dir=$(pwd); echo oops >&2; exit 3"},
      logs.path().string()));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(getpgid(job->pid), job->pid);  // its own process group
  auto exit = WaitFor(e, 7);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 3);
  EXPECT_FALSE(exit->signal.has_value());
  EXPECT_EQ(testing::Slurp(job->stdout_path), "gpus=GPU-aaaa,GPU-bbbb job=7 dir=/tmp\n");
  EXPECT_EQ(testing::Slurp(job->stderr_path), "oops\n");
  EXPECT_TRUE(e.running().empty());
}

TEST(ExecutorTest, CheckpointSignalThenTheWholeGroupIsKilled) {
  testing::TempDir logs;
  core::RealClock clock;
  Executor e(clock);
  // A job that checkpoints on SIGUSR1 and has a grandchild.
  auto job = e.Launch(Request(
      8,
      {"sh", "-c",
       "trap 'echo checkpointed' USR1; sleep 300 & echo child=$!; while true; do sleep 0.05; done"},
      logs.path().string()));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string out;
  for (int i = 0; i < 200 && out.find("child=") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    out = testing::Slurp(job->stdout_path);
  }
  const pid_t grandchild = std::stoi(out.substr(out.find("child=") + 6));
  ASSERT_TRUE(e.Signal(8, SIGUSR1).ok());
  for (int i = 0;
       i < 200 && testing::Slurp(job->stdout_path).find("checkpointed") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_THAT(testing::Slurp(job->stdout_path), HasSubstr("checkpointed"));
  ASSERT_TRUE(e.Signal(8, SIGKILL).ok());
  auto exit = WaitFor(e, 8);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGKILL);
  // The grandchild went with the group.
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = kill(grandchild, 0) != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "grandchild " << grandchild << " survived";
  EXPECT_EQ(e.Signal(8, SIGTERM).code(), core::StatusCode::kNotFound);
}

TEST(ExecutorTest, ClearErrorsLeaveNoProcess) {
  testing::TempDir logs;
  core::RealClock clock;
  Executor e(clock);
  auto missing = e.Launch(Request(1, {"no-such-program-xyz"}, logs.path().string()));
  EXPECT_THAT(missing.status().message(),
              HasSubstr("command \"no-such-program-xyz\" not found in PATH"));
  LaunchRequest bad_dir = Request(2, {"true"}, logs.path().string());
  bad_dir.spec.working_dir = "/no/such/dir";
  EXPECT_THAT(e.Launch(bad_dir).status().message(),
              HasSubstr("working directory /no/such/dir: No such file or directory"));
  const std::string not_exec = logs.Write("script.sh", "echo hi\n");  // no x bit
  auto denied = e.Launch(Request(3, {not_exec}, logs.path().string()));
  EXPECT_THAT(denied.status().message(), HasSubstr("Permission denied"));
  LaunchRequest nobody_home = Request(4, {"true"}, logs.path().string());
  nobody_home.uid = 3999999999u;
  EXPECT_THAT(e.Launch(nobody_home).status().message(), HasSubstr("no user with uid 3999999999"));
  EXPECT_TRUE(e.running().empty());
}

// As root, jobs run as their submitter: a throwaway user made for the test.
TEST(ExecutorAsRootTest, RunsAsTheSubmittingUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
  testing::ThrowawayUser account("gleanert");
  ASSERT_TRUE(account.ok());
  const std::string& user = account.name();
  const uint32_t uid = account.uid();
  testing::TempDir logs;
  chmod(logs.path().c_str(), 0755);
  core::RealClock clock;
  Executor e(clock);
  LaunchRequest r =
      Request(9, {"sh", "-c", "id -u; id -un; echo home=$HOME"}, logs.path().string());
  r.uid = uid;
  auto job = e.Launch(r);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  auto exit = WaitFor(e, 9);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 0);
  const std::string out = testing::Slurp(job->stdout_path);
  EXPECT_THAT(out, HasSubstr(std::to_string(uid) + "\n" + user + "\n"));
  struct stat st {};
  ASSERT_EQ(stat(job->stdout_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, uid);            // the user can read their own logs
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // and nobody else: a log may hold a token
}

// Out of memory, the kernel ends a job before the owner's own processes,
// and before the job's first process, which alone records how it ended.
TEST(ExecutorTest, TheOomKillerTakesTheJobFirst) {
  testing::TempDir logs;
  core::RealClock clock;
  Executor e(clock);
  auto job = e.Launch(
      Request(10, {"sh", "-c", "cat /proc/self/oom_score_adj; sleep 300"}, logs.path().string()));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  for (int i = 0; i < 200 && testing::Slurp(job->stdout_path).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(testing::Slurp(job->stdout_path), "500\n");
  // The recorder: -1000 where the kernel lets root lower it, else as gleaner.
  const std::string recorder =
      testing::Slurp("/proc/" + std::to_string(job->pid) + "/oom_score_adj");
  EXPECT_TRUE(recorder == "-1000\n" || recorder == "0\n") << recorder;
  ASSERT_TRUE(e.Signal(10, SIGKILL).ok());
  ASSERT_TRUE(WaitFor(e, 10).has_value());
}

}  // namespace
}  // namespace gleaner::agent

namespace gleaner::agent {
namespace {

// Whether `pid` is gone (or only a zombie waiting for a reaper).
bool Gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const size_t paren = text.rfind(')');
  return text.empty() || (paren != std::string::npos && text.substr(paren + 2, 1) == "Z");
}

// A job's own cgroup: processes that leave its process group (setsid) end
// with it, whether it is killed or simply exits. Skipped where the system
// gives gleaner no cgroup v2 to write.
class ExecutorCgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cgroups = JobCgroups::Open("gleaner-test-" + std::to_string(getpid()));
    if (!cgroups.ok()) GTEST_SKIP() << cgroups.status().message();
    cgroups_ = std::move(cgroups).value();
    executor_.UseCgroups(*cgroups_);
  }
  void TearDown() override {
    if (cgroups_) {
      EXPECT_TRUE(cgroups_->RemoveBase().ok());
    }
  }
  // Starts `script` as job `id`; the pid of the process it detached.
  pid_t StartDetaching(sched::JobId id, const std::string& script) {
    const std::string pid_file = (logs_.path() / ("escaped-" + std::to_string(id))).string();
    auto job = executor_.Launch(
        Request(id, {"sh", "-c", "setsid sleep 300 & echo $! > " + pid_file + "; " + script},
                logs_.path().string()));
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    for (int i = 0; i < 200 && testing::Slurp(pid_file).empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return static_cast<pid_t>(std::stol(testing::Slurp(pid_file)));
  }
  void ReapAll() {
    for (int i = 0; i < 300 && !executor_.running().empty(); ++i) {
      executor_.Reap();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (int i = 0; i < 100; ++i) executor_.Reap();  // sweeps the emptied cgroups
  }

  testing::TempDir logs_;
  core::RealClock clock_;
  Executor executor_{clock_};
  std::optional<JobCgroups> cgroups_;
};

TEST_F(ExecutorCgroupTest, KillingAJobKillsWhatLeftItsProcessGroup) {
  const pid_t escaped = StartDetaching(1, "exec sleep 300");
  EXPECT_FALSE(Gone(escaped));
  const std::string cgroup = executor_.running().at(1).cgroup;
  EXPECT_THAT(cgroup, HasSubstr("/job-1-"));
  ASSERT_TRUE(executor_.Signal(1, SIGKILL).ok());
  ReapAll();
  for (int i = 0; i < 100 && !Gone(escaped); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(Gone(escaped)) << "the detached process outlived its job";
  EXPECT_FALSE(std::filesystem::exists(cgroup));
}

TEST_F(ExecutorCgroupTest, WhatAJobLeavesRunningEndsWithIt) {
  const pid_t escaped = StartDetaching(2, "exit 0");
  const std::string first_run = executor_.running().at(2).cgroup;
  ReapAll();
  for (int i = 0; i < 100 && !Gone(escaped); ++i) {
    executor_.Reap();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(Gone(escaped)) << "the job's leftover kept running";
  EXPECT_FALSE(std::filesystem::exists(first_run));
}

// After a restart, cgroups no taken-back job holds are leftovers: what is
// in them dies and they go.
TEST_F(ExecutorCgroupTest, ARestartSweepsTheCgroupsOfJobsThatEndedMeanwhile) {
  const pid_t escaped = StartDetaching(4, "exec sleep 300");
  const std::string left = executor_.running().at(4).cgroup;
  Executor restarted(clock_);
  restarted.UseCgroups(*cgroups_);
  restarted.SweepLeftovers();
  for (int i = 0; i < 200 && std::filesystem::exists(left); ++i) {
    restarted.Reap();
    executor_.Reap();  // the old run's leader is still this process's child
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(std::filesystem::exists(left));
  EXPECT_TRUE(Gone(escaped));
  ReapAll();
}

// A gleaner killed before it could clean up leaves its base and its jobs'
// cgroups beside the next one's. Empty ones old enough go; one with a
// process in it (a job that may yet be taken back) and one just made (a
// live gleaner's launch) stay; and a base swept while empty comes back
// for the next launch.
TEST_F(ExecutorCgroupTest, TheNextGleanerRemovesWhatAKilledOneLeftEmpty) {
  const std::filesystem::path parent = std::filesystem::path(cgroups_->base()).parent_path();
  const std::string tag = std::to_string(getpid());
  const auto make = [](const std::filesystem::path& p) {
    std::filesystem::create_directory(p);
    return p;
  };
  const std::string launched_now =
      std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count());
  const auto empty_base = make(parent / ("gleaner-jobs-empty" + tag));
  make(empty_base / "job-1-1000");
  const auto young_base = make(parent / ("gleaner-jobs-young" + tag));
  const auto young = make(young_base / ("job-2-" + launched_now));
  const auto busy_base = make(parent / ("gleaner-jobs-busy" + tag));
  const auto busy = make(busy_base / "job-3-1000");
  const pid_t sleeper = fork();
  if (sleeper == 0) {
    execlp("sleep", "sleep", "300", nullptr);
    _exit(127);
  }
  {
    std::ofstream procs(busy / "cgroup.procs");
    procs << sleeper;
  }

  cgroups_->SweepStaleBases();
  EXPECT_FALSE(std::filesystem::exists(empty_base));
  EXPECT_TRUE(std::filesystem::exists(young));
  EXPECT_TRUE(std::filesystem::exists(busy));

  kill(sleeper, SIGKILL);
  waitpid(sleeper, nullptr, 0);
  for (const auto& dir : {young, young_base, busy, busy_base}) {
    for (int i = 0; i < 100 && std::filesystem::exists(dir) && rmdir(dir.c_str()) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // Our own base, swept away by another gleaner while empty.
  ASSERT_EQ(rmdir(cgroups_->base().c_str()), 0);
  auto job = executor_.Launch(Request(5, {"true"}, logs_.path().string()));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_NE(job->cgroup, "");
  ReapAll();
}

// A requeued job runs again under the same id: its new run gets a cgroup of
// its own, so cleaning up after the last run never touches it.
TEST_F(ExecutorCgroupTest, ARerunIsNotKilledByItsLastRunsCleanup) {
  const pid_t escaped = StartDetaching(3, "exit 0");
  for (int i = 0; i < 300 && !executor_.running().empty(); ++i) {
    executor_.Reap();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto rerun = executor_.Launch(Request(3, {"sleep", "300"}, logs_.path().string()));
  ASSERT_TRUE(rerun.ok()) << rerun.status().ToString();
  EXPECT_NE(rerun->cgroup, "");
  for (int i = 0; i < 20; ++i) {
    executor_.Reap();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(executor_.running().contains(3)) << "the rerun was killed";
  EXPECT_FALSE(Gone(rerun->pid));
  ASSERT_TRUE(executor_.Signal(3, SIGKILL).ok());
  ReapAll();
  EXPECT_TRUE(Gone(escaped));
}

}  // namespace
}  // namespace gleaner::agent

namespace gleaner::agent {
namespace {

// A job that ends while no gleaner is its parent (the daemon was killed and
// restarted): its first process recorded how it ended, so the exit status
// is known and the job is not run again.
TEST(ExecutorRestartTest, AnAdoptedJobsExitStatusIsKnown) {
  testing::TempDir logs;
  core::RealClock clock;
  const std::string marker = (logs.path() / "go").string();
  std::optional<Executor> first(clock);
  auto job = first->Launch(
      Request(9, {"sh", "-c", "while [ ! -e " + marker + " ]; do sleep 0.01; done; exit 4"},
              logs.path().string()));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  Executor restarted(clock);
  ASSERT_TRUE(restarted.Adopt(9, job->pid, *job->process_started_at, logs.path().string()).ok());
  // The first gleaner "dies" without reaping: its child is reaped by the
  // test below only to keep the process table clean.
  std::ofstream(marker) << "";
  std::optional<JobExit> exit;
  for (int i = 0; i < 1000 && !exit; ++i) {
    waitpid(job->pid, nullptr, WNOHANG);
    for (const JobExit& x : restarted.Reap()) {
      if (x.id == 9) exit = x;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(exit.has_value());
  EXPECT_FALSE(exit->status_unknown);
  EXPECT_EQ(exit->exit_code, 4);
}

TEST(ExecutorRestartTest, AJobKilledBySignalEndsTheSameWayThroughItsFirstProcess) {
  testing::TempDir logs;
  core::RealClock clock;
  Executor e(clock);
  auto job = e.Launch(Request(10, {"sh", "-c", "kill -TERM $$"}, logs.path().string()));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  auto exit = WaitFor(e, 10);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGTERM);
  EXPECT_FALSE(exit->exit_code.has_value());
}

}  // namespace
}  // namespace gleaner::agent
