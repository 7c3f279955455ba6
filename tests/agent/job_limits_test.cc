// Real jobs held to the CPUs and memory they asked for: the limits are read
// back from the cgroups the job's processes are in, and a job that uses
// more memory than it asked is killed by the kernel. Skipped where the
// system lets gleaner set no limit (neither cgroup v2 controllers it may
// pass on nor writable v1 hierarchies).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "agent/cgroup_files.h"
#include "agent/executor.h"
#include "testing/cgroup_dir.h"
#include "testing/temp_dir.h"

namespace gleaner::agent {
namespace {

using testing::CgroupDirOf;
using testing::LimitOf;

using ::testing::HasSubstr;

class JobLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cgroups = JobCgroups::Open("gleaner-test-" + std::to_string(getpid()));
    if (!cgroups.ok()) GTEST_SKIP() << cgroups.status().message();
    cgroups->EnableLimits();
    cgroups_ = std::move(cgroups).value();
    if (!cgroups_->limits().cpu() || !cgroups_->limits().memory()) {
      GTEST_SKIP() << cgroups_->limits().Describe();
    }
    executor_.UseCgroups(*cgroups_);
  }
  void TearDown() override {
    if (!cgroups_) return;
    for (int i = 0; i < 300 && !executor_.running().empty(); ++i) {
      executor_.Reap();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // The emptied cgroups go on later reaps: a job held to a sliver of a
    // CPU takes up to a period to die.
    bool removed = false;
    for (int i = 0; i < 300 && !removed; ++i) {
      executor_.Reap();
      removed = cgroups_->RemoveBase().ok();
      if (!removed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(removed);
  }

  LaunchRequest Request(sched::JobId id, std::vector<std::string> command, int64_t cpu_milli,
                        core::Bytes memory) {
    LaunchRequest r;
    r.id = id;
    r.uid = static_cast<uint32_t>(geteuid());
    r.spec.command = std::move(command);
    r.spec.working_dir = "/tmp";
    r.spec.cpu_milli = cpu_milli;
    r.spec.memory = memory;
    r.gpus = {core::GpuUuid("GPU-aaaa")};
    r.log_dir = logs_.path().string();
    return r;
  }

  std::optional<JobExit> WaitFor(sched::JobId id) {
    for (int i = 0; i < 3000; ++i) {
      for (const JobExit& x : executor_.Reap()) {
        if (x.id == id) return x;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::nullopt;
  }

  testing::TempDir logs_;
  core::RealClock clock_;
  Executor executor_{clock_};
  std::optional<JobCgroups> cgroups_;
};

TEST_F(JobLimitsTest, TheJobsCgroupsHoldItToTheCpusAndMemoryItAsked) {
  auto job = executor_.Launch(Request(1, {"sleep", "300"}, 1500, core::Bytes::MiB(96)));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  // Read where the job's process is, not where gleaner meant to put it.
  const std::string cpu = LimitOf(job->pid, "cpu.max", "cpu", "cpu.cfs_quota_us");
  EXPECT_THAT(cpu, ::testing::AnyOf("150000 100000", "150000")) << cgroups_->limits().Describe();
  EXPECT_EQ(LimitOf(job->pid, "memory.max", "memory", "memory.limit_in_bytes"),
            std::to_string(96 << 20));
  const std::string memory_dir = CgroupDirOf(job->pid, "memory");
  ASSERT_TRUE(executor_.Signal(1, SIGKILL).ok());
  ASSERT_TRUE(WaitFor(1).has_value());
  for (int i = 0; i < 100; ++i) executor_.Reap();
  // Its v1 directories go with its cgroup.
  if (memory_dir.find("/job-1-") != std::string::npos) {
    EXPECT_FALSE(std::filesystem::exists(memory_dir)) << memory_dir;
  }
}

TEST_F(JobLimitsTest, AJobThatUsesMoreMemoryThanItAskedIsKilled) {
  // tail keeps a line without an end in memory: 256 MiB of it, in a job
  // that asked for 32.
  auto job = executor_.Launch(
      Request(2, {"sh", "-c", "head -c 268435456 /dev/zero | tail -n 1 > /dev/null; exit $?"}, 0,
              core::Bytes::MiB(32)));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const std::optional<JobExit> exit = WaitFor(2);
  ASSERT_TRUE(exit.has_value());
  // The kernel's OOM killer sends SIGKILL to tail, and the shell exits
  // 137; or, choosing among the job's processes itself, to the shell.
  const bool killed = exit->exit_code == 128 + SIGKILL || exit->signal == SIGKILL;
  EXPECT_TRUE(killed) << "exit code " << exit->exit_code.value_or(-1) << ", signal "
                      << exit->signal.value_or(-1);
}

// A thousandth of a CPU is less than the kernel takes (1 ms a period):
// the job gets the least it allows rather than no limit.
TEST_F(JobLimitsTest, TheSmallestCpuAskGetsTheKernelsSmallestQuota) {
  auto job = executor_.Launch(Request(4, {"sleep", "300"}, 1, core::Bytes()));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_THAT(LimitOf(job->pid, "cpu.max", "cpu", "cpu.cfs_quota_us"),
              ::testing::AnyOf("1000 100000", "1000"));
  EXPECT_EQ(testing::Slurp(logs_.path() / "4.err"), "");  // nothing said: it is enforced
  ASSERT_TRUE(executor_.Signal(4, SIGKILL).ok());
  ASSERT_TRUE(WaitFor(4).has_value());
}

TEST_F(JobLimitsTest, AJobAskingNothingIsNotLimited) {
  auto job = executor_.Launch(Request(3, {"sleep", "300"}, 0, core::Bytes()));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const std::string v2 = CgroupDirOf(job->pid, "") + "/memory.max";
  if (std::filesystem::exists(v2)) {
    EXPECT_EQ(ReadCgroupFile(v2), "max");
  } else {  // no v1 directory of its own: it stays where gleaner is
    EXPECT_THAT(CgroupDirOf(job->pid, "memory"), ::testing::Not(HasSubstr("/job-3-")));
  }
  ASSERT_TRUE(executor_.Signal(3, SIGKILL).ok());
  ASSERT_TRUE(WaitFor(3).has_value());
}

// A killed gleaner leaves its v1 limit directories too: the next one
// removes those that are empty, as it does its cgroup v2 ones.
TEST_F(JobLimitsTest, TheNextGleanerRemovesV1DirectoriesAKilledOneLeft) {
  const std::vector<std::string> v1 = cgroups_->limits().V1Bases();
  if (v1.empty()) GTEST_SKIP() << "limits use cgroup v2 here";
  std::vector<std::filesystem::path> stale;
  for (const std::string& base : v1) {
    const auto left = std::filesystem::path(base).parent_path() /
                      ("gleaner-jobs-stale" + std::to_string(getpid()));
    std::filesystem::create_directory(left);
    std::filesystem::create_directory(left / "job-1-1000");
    stale.push_back(left);
  }
  EXPECT_GE(cgroups_->SweepStaleBases(), static_cast<int>(2 * stale.size()));
  for (const auto& left : stale) EXPECT_FALSE(std::filesystem::exists(left)) << left;
}

}  // namespace
}  // namespace gleaner::agent
