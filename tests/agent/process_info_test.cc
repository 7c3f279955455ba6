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
