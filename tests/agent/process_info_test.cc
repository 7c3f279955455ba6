#include "agent/process_info.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "testing/temp_dir.h"

namespace gleaner::agent {
namespace {

using ::testing::HasSubstr;

TEST(ProcfsInspectorTest, ReadsThisProcess) {
  ProcfsInspector inspector;
  auto self = inspector.Inspect(static_cast<uint32_t>(getpid()));
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(self->pid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(self->uid, getuid());
  EXPECT_EQ(self->user, UserName(getuid()));
  EXPECT_THAT(self->command, HasSubstr("agent_test"));
}

TEST(ProcfsInspectorTest, ReadsAProcTreeOfItsOwn) {
  testing::TempDir proc;
  proc.Write("4242/status", "Name:\tpython\nState:\tS (sleeping)\nUid:\t1000\t1000\t1000\t1000\n");
  proc.Write("4242/cmdline", std::string("python\0train.py\0--lr\0003e-4\0", 26));
  proc.Write("77/status", "Name:\tkworker/0:1\nUid:\t0\t0\t0\t0\n");
  proc.Write("77/cmdline", "");
  proc.Write("5/status", "Name:\tbroken\n");  // no Uid line
  ProcfsInspector inspector(proc.path().string());

  auto p = inspector.Inspect(4242);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->uid, 1000u);
  EXPECT_EQ(p->user, UserName(1000));
  EXPECT_EQ(p->command, "python train.py --lr 3e-4");

  auto kernel = inspector.Inspect(77);
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(kernel->user, "root");
  EXPECT_EQ(kernel->command, "[kworker/0:1]");

  EXPECT_FALSE(inspector.Inspect(5).has_value());
  EXPECT_FALSE(inspector.Inspect(999999).has_value());
}

TEST(ProcfsInspectorTest, SlurmJobFromTheEnvironmentWhenTheCgroupNamesNone) {
  testing::TempDir proc;
  const std::string status = "Name:\tpython\nUid:\t1000\t1000\t1000\t1000\n";
  // proctrack/linuxproc: no Slurm cgroup, the id in the environment.
  proc.Write("10/status", status);
  proc.Write("10/cgroup", "0::/user.slice/user-1000.slice/session-4.scope\n");
  proc.Write("10/environ", std::string("HOME=/home/a\0SLURM_JOB_ID=5123\0", 31));
  // proctrack/cgroup: the cgroup wins over what the environment claims.
  proc.Write("11/status", status);
  proc.Write("11/cgroup", "0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_0\n");
  proc.Write("11/environ", std::string("SLURM_JOB_ID=999\0", 17));
  // Not a job id: ignored.
  proc.Write("12/status", status);
  proc.Write("12/environ", std::string("SLURM_JOB_ID=1;rm -rf\0", 22));
  ProcfsInspector inspector(proc.path().string());

  EXPECT_EQ(inspector.Inspect(10)->slurm_job_id, "5123");
  EXPECT_EQ(inspector.Inspect(11)->slurm_job_id, "77");
  EXPECT_EQ(inspector.Inspect(12)->slurm_job_id, "");
}

TEST(UserNameTest, KnownAndUnknownUids) {
  EXPECT_EQ(UserName(0), "root");
  EXPECT_EQ(UserName(3999999999u), "3999999999");
}

TEST(ScenarioProcessInspectorTest, DeclaredProcessesFirstThenTheFallback) {
  auto demo = gpu::LoadScenario("demo");
  ASSERT_TRUE(demo.ok());
  ProcfsInspector procfs;
  ScenarioProcessInspector inspector(*demo, procfs);
  auto alice = inspector.Inspect(41873);
  ASSERT_TRUE(alice.has_value());
  EXPECT_EQ(alice->user, "alice");
  EXPECT_FALSE(alice->uid.has_value());
  EXPECT_THAT(alice->command, HasSubstr("train.py"));
  auto self = inspector.Inspect(static_cast<uint32_t>(getpid()));
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(self->user, UserName(getuid()));
}

}  // namespace
}  // namespace gleaner::agent
