// Interactive sessions through a real pseudo-terminal: the job's terminal
// is its controlling one, its master reaches only its owner, gleaner's
// notices appear on it, and a session nobody attaches to is hung up.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "agent/executor.h"
#include "testing/temp_dir.h"
#include "testing/wait_for_exit.h"

namespace gleaner::agent {
namespace {

using ::testing::HasSubstr;

LaunchRequest Session(sched::JobId id, const std::string& script, const std::string& logs) {
  LaunchRequest r;
  r.id = id;
  r.uid = static_cast<uint32_t>(geteuid());
  r.spec.command = {"sh", "-c", script};
  r.spec.working_dir = "/tmp";
  r.spec.pty = true;
  r.spec.grace = core::Seconds(20);
  r.gpus = {core::GpuUuid("GPU-aaaa")};
  r.log_dir = logs;
  return r;
}

// What the session writes, read from its master until `want` shows (or
// 10 s pass, or the session's side is gone).
std::string ReadUntil(int master, const std::string& want, std::string* seen) {
  for (int i = 0; i < 1000 && seen->find(want) == std::string::npos; ++i) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 10) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO: nothing holds the session's side any more
    seen->append(buf, static_cast<size_t>(n));
  }
  return *seen;
}

// An executor whose sessions' terminals wait in `terminals`.
struct Sessions {
  explicit Sessions(const core::Clock& clock) : executor(clock) {
    executor.UseTerminals(terminals);
  }
  core::Result<RunningJob> Launch(sched::JobId id, const std::string& script) {
    return executor.Launch(Session(id, script, logs.path().string()));
  }
  testing::TempDir logs;
  Executor executor;
  std::shared_ptr<core::TerminalHandoff> terminals = std::make_shared<core::TerminalHandoff>();
};

TEST(SessionTerminalTest, ASessionTalksThroughItsOwnControllingTerminal) {
  core::RealClock clock;
  Sessions rig(clock);
  Executor& e = rig.executor;
  auto& terminals = rig.terminals;
  auto job =
      rig.Launch(5,
                 "[ -t 0 ] && [ -t 1 ] && echo on-a-terminal; echo gpus=$CUDA_VISIBLE_DEVICES; "
                 "read line; echo got:$line; exit 4");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_TRUE(job->stdout_path.empty());  // no log: the terminal is its output

  EXPECT_EQ(terminals->Take(5, geteuid() + 1).status().code(), core::StatusCode::kPermissionDenied);
  auto master = terminals->Take(5, geteuid());
  ASSERT_TRUE(master.ok()) << master.status().ToString();
  std::string seen;
  ReadUntil(*master, "gpus=GPU-aaaa", &seen);
  EXPECT_THAT(seen, HasSubstr("on-a-terminal"));
  ASSERT_EQ(write(*master, "hello\n", 6), 6);
  EXPECT_THAT(ReadUntil(*master, "got:hello", &seen), HasSubstr("got:hello"));
  const auto exit = testing::WaitForExit(e, 5);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 4);
  close(*master);
}

TEST(SessionTerminalTest, TheUserReadsWhyAndWhenTheSessionEnds) {
  core::RealClock clock;
  Sessions rig(clock);
  Executor& e = rig.executor;
  auto& terminals = rig.terminals;
  // An interactive shell ignores SIGTERM; the notice is what the user gets.
  auto job = rig.Launch(6, "trap '' TERM; echo ready; while :; do sleep 0.05; done");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  auto master = terminals->Take(6, geteuid());
  ASSERT_TRUE(master.ok()) << master.status().ToString();
  std::string seen;
  ReadUntil(*master, "ready", &seen);
  e.Tell(6, "alice is back on GPU 0");
  ASSERT_TRUE(e.Signal(6, SIGTERM).ok());
  ReadUntil(*master, "Save your work", &seen);
  EXPECT_THAT(seen, HasSubstr("[gleaner] alice is back on GPU 0"));
  EXPECT_THAT(seen, HasSubstr("[gleaner] This session must end: it will be killed in 20 s."));
  ASSERT_TRUE(e.Signal(6, SIGKILL).ok());
  ReadUntil(*master, "ended now", &seen);
  EXPECT_THAT(seen, HasSubstr("This session is being ended now."));
  const auto exit = testing::WaitForExit(e, 6);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGKILL);
  close(*master);
}

// What a session's client closes hangs the session up: SIGHUP, passed on
// by its first process to the job.
TEST(SessionTerminalTest, ClosingTheTerminalHangsTheSessionUp) {
  core::RealClock clock;
  Sessions rig(clock);
  Executor& e = rig.executor;
  auto& terminals = rig.terminals;
  auto job = rig.Launch(7, "sleep 300");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  auto master = terminals->Take(7, geteuid());
  ASSERT_TRUE(master.ok());
  close(*master);  // at once: the hangup may come before the first process is ready for it
  const auto exit = testing::WaitForExit(e, 7);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGHUP);
}

// A session nobody attaches to in time is ended, even one deaf to the
// hangup (nohup) whose shell moved it to a process group of its own.
TEST(SessionTerminalTest, ASessionNobodyAttachesToIsEnded) {
  core::ManualClock clock;
  Sessions rig(clock);
  Executor& e = rig.executor;
  auto& terminals = rig.terminals;
  auto job = rig.Launch(9, "trap '' HUP; set -m; sleep 300 & echo child=$!; wait");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_TRUE(e.Reap().empty());
  clock.Advance(core::TerminalHandoff::kAttachWithin);
  const auto exit = testing::WaitForExit(e, 9);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_EQ(terminals->Take(9, geteuid()).status().code(), core::StatusCode::kNotFound);
}

// An interactive shell puts itself and each of its jobs in a process group
// of its own: the checkpoint signal reaches them all, through the session.
TEST(SessionTerminalTest, SignalsReachJobsAShellMovedToOtherProcessGroups) {
  core::RealClock clock;
  Sessions rig(clock);
  Executor& e = rig.executor;
  auto& terminals = rig.terminals;
  auto job = rig.Launch(10,
                        "set -m; sh -c \"trap 'echo got-term; exit 0' TERM; echo started; "
                        "while :; do sleep 0.05; done\" & wait");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  auto master = terminals->Take(10, geteuid());
  ASSERT_TRUE(master.ok());
  std::string seen;
  ReadUntil(*master, "started", &seen);
  ASSERT_TRUE(e.Signal(10, SIGTERM).ok());
  EXPECT_THAT(ReadUntil(*master, "got-term", &seen), HasSubstr("got-term"));
  const auto exit = testing::WaitForExit(e, 10);
  ASSERT_TRUE(exit.has_value());
  close(*master);
}

TEST(SessionTerminalTest, WithoutAHandoffASessionIsRefused) {
  testing::TempDir logs;
  core::RealClock clock;
  Executor e(clock);
  const auto job = e.Launch(Session(8, "true", logs.path().string()));
  EXPECT_EQ(job.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_THAT(job.status().message(), HasSubstr("no client to hand its terminal to"));
  EXPECT_TRUE(e.running().empty());
}

}  // namespace
}  // namespace gleaner::agent
