// `gleaner run --pty` against a running gleaner up, from a terminal the
// test holds (a pseudo-terminal): the session waits for an idle GPU, gets
// this terminal and its size, reads what is typed, and `gleaner run` ends
// with the session's exit code.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "testing/gleaner_up.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using nlohmann::json;
using testing::Gleaner;
using ::testing::HasSubstr;

// `gleaner ARGS...` on a terminal of its own, 30 rows by 100 columns.
struct OnTerminal {
  pid_t pid = -1;
  int master = -1;
  std::string seen;

  explicit OnTerminal(std::vector<std::string> args) {
    winsize size{30, 100, 0, 0};
    pid = forkpty(&master, nullptr, nullptr, &size);
    if (pid == 0) {
      std::vector<char*> argv;
      std::string binary = GLEANER_BINARY;
      argv.push_back(binary.data());
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      setenv("TERM", "xterm-test", 1);
      execv(GLEANER_BINARY, argv.data());
      _exit(127);
    }
  }
  ~OnTerminal() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (master >= 0) close(master);
  }
  // Reads until `want` shows, for up to `seconds`.
  bool Expect(const std::string& want, int seconds = 20) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (seen.find(want) == std::string::npos && std::chrono::steady_clock::now() < until) {
      pollfd p{master, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(master, buf, sizeof buf);
      if (n <= 0) break;
      seen.append(buf, static_cast<size_t>(n));
    }
    return seen.find(want) != std::string::npos;
  }
  void Type(const std::string& keys) {
    ASSERT_EQ(write(master, keys.data(), keys.size()), static_cast<ssize_t>(keys.size()));
  }
  // Its exit code, waiting up to 20 s; -1 if it did not end.
  int Wait() {
    for (int i = 0; i < 400; ++i) {
      Expect("\x01", 0);  // keep draining: a full terminal would stall it
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -1;
  }
};

// A gleaner up on fake GPUs, for 90 s at most.
struct Up {
  testing::TempDir dir;
  std::string data = (dir.path() / "state").string();
  std::string pid_file = (dir.path() / "up.pid").string();
  std::optional<testing::KillOnExit> up;

  Up() {
    const std::string config =
        dir.Write("g.toml",
                  "[idle]\nidle_after_s = 1\n[sampling]\ninterval_s = 0.2\n"
                  "[sessions]\nclass = \"opportunistic\"\nmax_runtime_s = 600\n");
    EXPECT_EQ(std::system((std::string(GLEANER_BINARY) + " up --fake demo --data-dir " + data +
                           " --config " + config + " --for 90 >" +
                           (dir.path() / "up.log").string() + " 2>&1 & echo $! >" + pid_file)
                              .c_str()),
              0);
    up.emplace(pid_file);
    // Its API is up once its socket is there.
    for (int i = 0; i < 400 && !std::filesystem::exists(data + "/gleaner.sock"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  bool ready() const { return std::filesystem::exists(data + "/gleaner.sock"); }
};

TEST(SessionBinaryTest, ASessionGetsThisTerminalAndEndsWithItsExitCode) {
  Up up;
  ASSERT_TRUE(up.ready()) << testing::Slurp(up.dir.path() / "up.log");
  const std::string& data = up.data;
  OnTerminal session({"--data-dir", data, "run", "--gpus", "1", "--pty", "--", "sh", "-c",
                      "stty size; echo term=$TERM gpus=$CUDA_VISIBLE_DEVICES; read x; "
                      "echo got:$x; exit 3"});
  ASSERT_GT(session.pid, 0);
  ASSERT_TRUE(session.Expect("term=xterm-test gpus=GPU-")) << session.seen;
  EXPECT_THAT(session.seen, HasSubstr("job 1 attached"));
  EXPECT_THAT(session.seen, HasSubstr("30 100"));  // this terminal's size
  session.Type("hello\r");
  EXPECT_TRUE(session.Expect("got:hello")) << session.seen;
  EXPECT_EQ(session.Wait(), 3) << session.seen;

  // The session got the [sessions] class and time limit; it ran on no log.
  const json job = json::parse(Gleaner("--data-dir " + data + " show 1").out);
  EXPECT_EQ(job["state"], "failed");
  EXPECT_EQ(job["exit_code"], 3);
  EXPECT_EQ(job["spec"]["priority_class"], "opportunistic");
  EXPECT_EQ(job["spec"]["max_runtime_s"], 600);
  EXPECT_EQ(job["spec"]["pty"], true);
}

// `gleaner notebook` prints the URL Jupyter says, with its token, and
// leaves the server running as a job; without Jupyter it says so.
TEST(SessionBinaryTest, ANotebookPrintsItsUrlAndRunsOn) {
  Up up;
  ASSERT_TRUE(up.ready()) << testing::Slurp(up.dir.path() / "up.log");
  const std::string bin = (up.dir.path() / "bin").string();
  std::filesystem::create_directories(bin);
  up.dir.Write("bin/jupyter",
               "#!/bin/sh\n"
               "echo \"args: $*\" >&2\n"
               "echo '    Or copy and paste one of these URLs:' >&2\n"
               "echo '        http://127.0.0.1:8891/lab?token=0f3a9c' >&2\n"
               "exec sleep 300\n");
  std::filesystem::permissions(bin + "/jupyter", std::filesystem::perms::owner_all |
                                                     std::filesystem::perms::group_read |
                                                     std::filesystem::perms::group_exec |
                                                     std::filesystem::perms::others_read |
                                                     std::filesystem::perms::others_exec);
  const testing::Outcome started =
      Gleaner("--data-dir " + up.data + " notebook --env PATH=" + bin + ":/usr/bin:/bin");
  ASSERT_EQ(started.rc, 0) << started.err;
  EXPECT_EQ(started.out, "http://127.0.0.1:8891/lab?token=0f3a9c\n");
  EXPECT_THAT(started.err, HasSubstr("runs Jupyter on GPU-"));
  const json job = json::parse(Gleaner("--data-dir " + up.data + " show 1").out);
  EXPECT_EQ(job["state"], "running");
  EXPECT_EQ(job["spec"]["command"], json({"jupyter", "lab", "--no-browser", "--ip=127.0.0.1"}));
  EXPECT_EQ(job["spec"]["max_runtime_s"], 8 * 3600);
  EXPECT_EQ(Gleaner("--data-dir " + up.data + " cancel 1").rc, 0);

  const testing::Outcome missing =
      Gleaner("--data-dir " + up.data + " notebook --env PATH=/nonexistent");
  EXPECT_EQ(missing.rc, 1);
  EXPECT_THAT(missing.err, HasSubstr("command \"jupyter\" not found in PATH"));
}

}  // namespace
}  // namespace gleaner
