// A rotated join secret: the coordinator refuses the agents' credentials,
// and an agent joins again with the secret file as it is now.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "testing/gleaner_up.h"
#include "testing/spawn_daemon.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using testing::Daemon;
using testing::Slurp;

TEST(RejoinBinaryTest, AnAgentJoinsAgainWhenTheSecretIsRotated) {
  testing::TempDir dir;
  const std::string secret = dir.Write("join.secret", std::string(64, 'a'));
  chmod(secret.c_str(), 0600);
  const std::string port = std::to_string(testing::FreePort());
  const std::string server_command = std::string(GLEANER_BINARY) + " server --data-dir " +
                                     (dir.path() / "s").string() + " --listen 127.0.0.1:" + port +
                                     " --join-secret-file " + secret + " --for 60";
  Daemon server = testing::Spawn(dir, "server", server_command);
  ASSERT_TRUE(testing::WaitForLog(server, "leading")) << Slurp(server.log);
  const Daemon agent = testing::Spawn(
      dir, "agent",
      std::string(GLEANER_BINARY) + " agent --server http://127.0.0.1:" + port +
          " --join-secret-file " + secret + " --name gpu-a --fake demo --interval 0.5 --data-dir " +
          (dir.path() / "a").string() + " --for 60");
  ASSERT_TRUE(testing::WaitForLog(agent, "reporting to the coordinator")) << Slurp(agent.log);

  // The operator rotates the secret and restarts the coordinator.
  kill(server.pid, SIGTERM);
  ASSERT_TRUE(testing::WaitForLog(server, "stopped"));
  dir.Write("join.secret", std::string(64, 'b'));
  server = testing::Spawn(dir, "server", server_command);
  // The new coordinator hears the agent's GPUs: its reports are taken.
  for (int i = 0; i < 600 && testing::CountInLog(server, "host gpu-a has 8 GPU(s)") < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string log = Slurp(agent.log);
  EXPECT_EQ(testing::CountInLog(server, "host gpu-a has 8 GPU(s)"), 2) << Slurp(server.log);
  EXPECT_THAT(log, ::testing::HasSubstr("refused this agent's credential"));
  EXPECT_EQ(testing::CountInLog(agent, "joined the cluster as gpu-a"), 2) << log;
  kill(agent.pid, SIGTERM);
  kill(server.pid, SIGTERM);
}

}  // namespace
}  // namespace gleaner
