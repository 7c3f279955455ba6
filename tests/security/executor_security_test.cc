// What a job can reach of the daemon that started it: no terminal, no
// descriptor, no file through a planted link, no glimpse of root-only
// paths, and no input that can bring the daemon down.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "agent/executor.h"
#include "testing/temp_dir.h"
#include "testing/throwaway_user.h"

namespace gleaner::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

LaunchRequest Request(sched::JobId id, std::vector<std::string> command, const std::string& logs) {
  LaunchRequest r;
  r.id = id;
  r.uid = static_cast<uint32_t>(geteuid());
  r.spec.command = std::move(command);
  r.spec.working_dir = "/tmp";
  r.log_dir = logs;
  return r;
}

// The job's stdout once it has ended (up to 10 s).
std::string OutputOf(Executor& e, const RunningJob& job) {
  for (int i = 0; i < 1000 && !e.running().empty(); ++i) {
    e.Reap();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return testing::Slurp(job.stdout_path);
}

TEST(JobIsolationTest, AJobHasItsOwnSessionAndNoTerminal) {
  // With the daemon's session, a job could push keystrokes into the
  // terminal gleaner was started from (TIOCSTI).
  testing::TempDir logs;
  core::RealClock clock;
  Executor e(clock);
  auto job = e.Launch(Request(1, {"cat", "/proc/self/stat"}, logs.path().string()));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const std::string stat = OutputOf(e, *job);
  // Fields after the command's ")": state ppid pgrp session tty_nr.
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string state;
  long ppid = 0, pgrp = 0, session = 0, tty = -1;
  fields >> state >> ppid >> pgrp >> session >> tty;
  EXPECT_NE(session, getsid(0)) << stat;
  EXPECT_EQ(session, job->pid) << "the job's first process leads its session";
  EXPECT_EQ(tty, 0) << "no controlling terminal";
}

TEST(JobIsolationTest, AJobInheritsNoDescriptorOfTheDaemon) {
  testing::TempDir logs;
  // A descriptor opened without O_CLOEXEC, as a library might.
  const int leaked = dup2(open("/dev/null", O_RDONLY), 57);
  ASSERT_EQ(leaked, 57);
  core::RealClock clock;
  Executor e(clock);
  auto job = e.Launch(Request(2, {"ls", "/proc/self/fd"}, logs.path().string()));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const std::string fds = OutputOf(e, *job);
  close(leaked);
  // 0-2, and the directory ls itself opened.
  EXPECT_EQ(fds, "0\n1\n2\n3\n");
}

TEST(JobIsolationTest, LogsPlantedAsLinksAreRefusedAndLeftAlone) {
  testing::TempDir logs;
  testing::TempDir elsewhere;
  const std::string target = elsewhere.Write("target", "precious\n");
  ASSERT_EQ(symlink(target.c_str(), (logs.path() / "3.out").c_str()), 0);
  ASSERT_EQ(link(target.c_str(), (logs.path() / "4.out").c_str()), 0);
  core::RealClock clock;
  Executor e(clock);
  auto via_symlink = e.Launch(Request(3, {"echo", "overwritten"}, logs.path().string()));
  EXPECT_FALSE(via_symlink.ok());
  auto via_hard_link = e.Launch(Request(4, {"echo", "overwritten"}, logs.path().string()));
  EXPECT_FALSE(via_hard_link.ok());
  EXPECT_THAT(via_hard_link.status().message(), HasSubstr("not a plain file of its own"));
  EXPECT_EQ(testing::Slurp(target), "precious\n");
  EXPECT_TRUE(e.running().empty());
}

TEST(JobIsolationTest, AnImpossibleWorkingDirectoryFailsTheJobNotTheDaemon) {
  // A component over NAME_MAX made std::filesystem throw, and the daemon
  // died on every restart with the job still queued.
  testing::TempDir logs;
  core::RealClock clock;
  Executor e(clock);
  LaunchRequest r = Request(5, {"true"}, logs.path().string());
  r.spec.working_dir = "/" + std::string(300, 'x') + "/y";
  auto job = e.Launch(r);
  ASSERT_FALSE(job.ok());
  EXPECT_THAT(job.status().message(), HasSubstr("working directory"));
  EXPECT_THAT(job.status().message(), HasSubstr("File name too long"));
  EXPECT_TRUE(e.running().empty());
}

TEST(JobIsolationTest, ALogPastItsCapIsEmptiedAndTheJobWritesOn) {
  testing::TempDir logs;
  core::RealClock clock;
  Executor e(clock);
  e.CapLogs(1000);
  auto job =
      e.Launch(Request(10, {"sh", "-c", "head -c 5000 /dev/zero | tr '\\0' x; sleep 1; echo after"},
                       logs.path().string()));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  bool trimmed = false;
  for (int i = 0; i < 1000 && !e.running().empty(); ++i) {
    e.Reap();
    trimmed = trimmed || testing::Slurp(job->stdout_path).find("dropped") != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(trimmed);
  const std::string log = testing::Slurp(job->stdout_path);
  EXPECT_LT(log.size(), 2000u);
  EXPECT_THAT(log, HasSubstr("bytes before this line were dropped]\n"));
  EXPECT_THAT(log, ::testing::EndsWith("after\n"));
}

// As root, the working directory and the program are looked at only as the
// job's user: whether a root-only path exists never shows in the reason.
TEST(JobIsolationAsRootTest, RootOnlyPathsDoNotLeakThroughFailureReasons) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
  testing::ThrowawayUser account("gleanerx");
  ASSERT_TRUE(account.ok());
  testing::TempDir logs;
  chmod(logs.path().c_str(), 0755);
  testing::TempDir vault;  // mode 0700, root's
  chmod(vault.path().c_str(), 0700);
  std::filesystem::create_directory(vault.path() / "exists");
  core::RealClock clock;
  Executor e(clock);
  const auto reason = [&](sched::JobId id, const std::string& dir) {
    LaunchRequest r = Request(id, {"true"}, logs.path().string());
    r.uid = account.uid();
    r.spec.working_dir = dir;
    auto job = e.Launch(r);
    EXPECT_FALSE(job.ok());
    std::string why = job.status().message();
    const size_t at = why.find(dir);
    return at == std::string::npos ? why : why.replace(at, dir.size(), "DIR");
  };
  const std::string present = reason(6, (vault.path() / "exists").string());
  const std::string absent = reason(6, (vault.path() / "absent").string());
  EXPECT_EQ(present, absent);
  EXPECT_THAT(present, HasSubstr("Permission denied"));

  const auto program_reason = [&](sched::JobId id, const std::string& program) {
    LaunchRequest r = Request(id, {program}, logs.path().string());
    r.uid = account.uid();
    auto job = e.Launch(r);
    EXPECT_FALSE(job.ok());
    std::string why = job.status().message();
    const size_t at = why.find(program);
    return at == std::string::npos ? why : why.replace(at, program.size(), "PROGRAM");
  };
  const std::string script = vault.Write("exists/run.sh", "#!/bin/sh\n");
  chmod(script.c_str(), 0755);
  EXPECT_EQ(program_reason(8, script), program_reason(8, (vault.path() / "exists/no.sh").string()));
}

}  // namespace
}  // namespace gleaner::agent
