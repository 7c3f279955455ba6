// Agents join with one-time tokens an admin issues per host: a token
// joins once and as its host only, a joined host is taken over only by a
// token issued with --replace (which cuts the old agent off), and after a
// rotation of the cluster's secret an agent joins again with a new token.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "testing/gleaner_up.h"
#include "testing/run_gleaner.h"
#include "testing/spawn_daemon.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using testing::Daemon;
using ::testing::HasSubstr;
using testing::Slurp;

class RejoinBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    secret_ = dir_.Write("cluster.secret", std::string(64, 'a'));
    chmod(secret_.c_str(), 0600);
    server_data_ = (dir_.path() / "s").string();
    port_ = std::to_string(testing::FreePort());
  }
  void TearDown() override {
    for (const Daemon& d : started_) kill(d.pid, SIGKILL);
  }
  Daemon StartServer() {
    Daemon d = testing::Spawn(dir_, "server",
                              std::string(GLEANER_BINARY) + " server --data-dir " + server_data_ +
                                  " --listen 127.0.0.1:" + port_ + " --join-secret-file " +
                                  secret_ + " --for 60");
    started_.push_back(d);
    return d;
  }
  std::string AgentCommand(const std::string& name, const std::string& data,
                           const std::string& token_file) {
    return std::string(GLEANER_BINARY) + " agent --server http://127.0.0.1:" + port_ +
           " --join-token-file " + token_file + " --name " + name +
           " --fake demo --interval 0.5 --data-dir " + (dir_.path() / data).string();
  }
  Daemon StartAgent(const std::string& name, const std::string& data,
                    const std::string& token_file) {
    Daemon d = testing::Spawn(dir_, data, AgentCommand(name, data, token_file) + " --for 60");
    started_.push_back(d);
    return d;
  }

  testing::TempDir dir_;
  std::string secret_;
  std::string server_data_;
  std::string port_;
  std::vector<Daemon> started_;
};

TEST_F(RejoinBinaryTest, ATokenJoinsOnceAsItsHostAndOnlyReplaceTakesAJoinedName) {
  Daemon server = StartServer();
  ASSERT_TRUE(testing::WaitForLog(server, "leading")) << Slurp(server.log);
  const std::string token = testing::JoinTokenFile(dir_, server_data_, "gpu-a");
  ASSERT_FALSE(token.empty());
  const Daemon first = StartAgent("gpu-a", "a1", token);
  ASSERT_TRUE(testing::WaitForLog(first, "reporting to the coordinator")) << Slurp(first.log);

  // The spent token joins nobody again, as that host or another.
  testing::Outcome again = testing::RunBinary(AgentCommand("gpu-a", "a2", token), "--for 5");
  EXPECT_NE(again.rc, 0);
  EXPECT_THAT(again.err, HasSubstr("was used at"));
  const std::string other = testing::JoinTokenFile(dir_, server_data_, "gpu-b");
  testing::Outcome renamed = testing::RunBinary(AgentCommand("gpu-c", "a3", other), "--for 5");
  EXPECT_NE(renamed.rc, 0);
  EXPECT_THAT(renamed.err, HasSubstr("this join token is for host gpu-b, not gpu-c"));
  // An agent with neither credential nor token is told how to get one.
  testing::Outcome bare = testing::RunBinary(
      std::string(GLEANER_BINARY) + " agent --server http://127.0.0.1:" + port_ +
          " --name gpu-d --fake demo --data-dir " + (dir_.path() / "a4").string(),
      "--for 5");
  EXPECT_NE(bare.rc, 0);
  EXPECT_THAT(bare.err, HasSubstr("gleaner agent-token create --host gpu-d"));

  // gpu-a has joined: a plain token for it is refused; --replace is the
  // admin's deliberate act, and the agent holding gpu-a's credential is
  // cut off once the replacement joins.
  testing::Outcome plain =
      testing::Gleaner("--data-dir " + server_data_ + " agent-token create --host gpu-a");
  EXPECT_NE(plain.rc, 0);
  EXPECT_THAT(plain.err, HasSubstr("has joined already"));
  const std::string replacement =
      testing::JoinTokenFile(dir_, server_data_, "gpu-a", "--replace", "gpu-a.replace");
  ASSERT_FALSE(replacement.empty());
  const Daemon second = StartAgent("gpu-a", "a5", replacement);
  ASSERT_TRUE(testing::WaitForLog(second, "reporting to the coordinator")) << Slurp(second.log);
  EXPECT_TRUE(testing::WaitForLog(first, "replaced by a later join of that host", 15))
      << Slurp(first.log);

  // The secret is rotated: every credential stops working, and the agent
  // joins again with the new token an admin puts in its file.
  kill(server.pid, SIGTERM);
  ASSERT_TRUE(testing::WaitForLog(server, "stopped"));
  dir_.Write("cluster.secret", std::string(64, 'b'));
  server = StartServer();  // logs on after the first one's lines
  for (int i = 0; i < 600 && testing::CountInLog(server, "leading") < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(testing::CountInLog(server, "leading"), 2) << Slurp(server.log);
  ASSERT_FALSE(
      testing::JoinTokenFile(dir_, server_data_, "gpu-a", "--replace", "gpu-a.replace").empty());
  for (int i = 0; i < 600 && testing::CountInLog(second, "joined the cluster as gpu-a") < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(testing::CountInLog(second, "joined the cluster as gpu-a"), 2) << Slurp(second.log);
  EXPECT_THAT(Slurp(second.log), HasSubstr("refused this agent's credential"));
  // The restarted coordinator takes its reports again.
  const auto heard_after_restart = [&] {
    const std::string text = Slurp(server.log);
    const size_t restart = text.rfind("leading");
    return text.find("host gpu-a has 8 GPU(s)", restart) != std::string::npos;
  };
  for (int i = 0; i < 600 && !heard_after_restart(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(heard_after_restart()) << Slurp(server.log);
}

// The cluster's secret stays on the coordinators: an agent given it is
// told what replaced it.
TEST_F(RejoinBinaryTest, AnAgentRefusesTheClusterSecret) {
  testing::Outcome old =
      testing::RunBinary(std::string(GLEANER_BINARY) + " agent --server http://127.0.0.1:" + port_ +
                             " --join-secret-file " + secret_ +
                             " --name gpu-a --fake demo --data-dir " + (dir_.path() / "a").string(),
                         "--for 1");
  EXPECT_NE(old.rc, 0);
  EXPECT_THAT(old.err, HasSubstr("agents no longer hold the cluster's secret"));
}

}  // namespace
}  // namespace gleaner
