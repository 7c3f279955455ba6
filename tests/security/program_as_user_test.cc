// A program run for a job as its user (RunProgram: sbatch in bridge mode)
// is found on PATH as that user finds it, and runs with nothing of the
// daemon's: root's view of the file system never picks what runs.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "agent/account.h"
#include "agent/run_program.h"
#include "testing/temp_dir.h"
#include "testing/throwaway_user.h"

namespace gleaner {
namespace {

// A PATH whose first directory only root may enter holds a `tool` too:
// before, root's access() picked it, and the user's execve of it failed
// ("cannot execute the program", exit 127). As the user it is passed over
// for the one the user can run.
TEST(ProgramAsUserTest, PathIsSearchedAsTheUserNotAsRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a program as another user";
  testing::ThrowawayUser user("glprog");
  ASSERT_TRUE(user.ok());
  testing::TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all |
                                               std::filesystem::perms::group_exec |
                                               std::filesystem::perms::others_exec);
  const std::filesystem::path hidden = dir.path() / "root-only";
  const std::filesystem::path open = dir.path() / "open";
  std::filesystem::create_directories(hidden);
  std::filesystem::create_directories(open);
  chmod(hidden.c_str(), 0700);
  chmod(open.c_str(), 0755);
  for (const auto& [where, says] : {std::pair{hidden, "root-only"}, std::pair{open, "open"}}) {
    const std::string tool = (where / "tool").string();
    dir.Write(std::filesystem::relative(tool, dir.path()).string(),
              std::string("#!/bin/sh\necho ") + says + " tool as $(id -u)\n");
    chmod(tool.c_str(), 0755);
  }
  auto account = agent::LookUpAccount(user.uid());
  ASSERT_TRUE(account.ok()) << account.status().message();
  agent::ProgramOptions options;
  options.as = *account;
  options.env = {"PATH=" + hidden.string() + ":" + open.string() + ":/usr/bin:/bin"};
  auto ran = agent::RunProgram({"tool"}, options);
  ASSERT_TRUE(ran.ok()) << ran.status().message();
  EXPECT_EQ(ran->exit_code, 0) << ran->err;
  EXPECT_EQ(ran->out, "open tool as " + std::to_string(user.uid()) + "\n");
}

// The child holds no descriptor of the daemon's, whatever it had open.
TEST(ProgramAsUserTest, TheProgramInheritsNoDescriptor) {
  testing::TempDir dir;
  const std::string secret = dir.Write("secret", "x");
  const int opened = open(secret.c_str(), O_RDONLY);
  const int fd = fcntl(opened, F_DUPFD, 50);  // not close-on-exec, on purpose
  close(opened);
  ASSERT_GE(fd, 50);
  auto ran = agent::RunProgram({"sh", "-c", "ls /proc/self/fd"});
  close(fd);
  ASSERT_TRUE(ran.ok()) << ran.status().message();
  EXPECT_EQ(ran->out.find(std::to_string(fd) + "\n"), std::string::npos) << ran->out;
}

}  // namespace
}  // namespace gleaner
