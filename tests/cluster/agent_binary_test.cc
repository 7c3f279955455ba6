// An agent does on its host what `gleaner up` does: it fires the config's
// alert rules and serves the host's per-GPU metrics, and its reports name
// the protocol it speaks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include "net/http_client.h"
#include "testing/gleaner_up.h"
#include "testing/run_gleaner.h"
#include "testing/spawn_daemon.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using testing::Daemon;
using ::testing::HasSubstr;
using testing::Slurp;

TEST(AgentBinaryTest, FiresAlertsAndServesItsHostsMetrics) {
  testing::TempDir dir;
  const std::string secret = dir.Write("cluster.secret", std::string(64, 'a'));
  chmod(secret.c_str(), 0600);
  const std::string server_data = (dir.path() / "s").string();
  const std::string port = std::to_string(testing::FreePort());
  std::vector<Daemon> started;
  started.push_back(testing::Spawn(dir, "server",
                                   std::string(GLEANER_BINARY) + " server --data-dir " +
                                       server_data + " --listen 127.0.0.1:" + port +
                                       " --join-secret-file " + secret + " --for 60"));
  ASSERT_TRUE(testing::WaitForLog(started[0], "leading")) << Slurp(started[0].log);
  const std::string token = testing::JoinTokenFile(dir, server_data, "gpu-a");
  ASSERT_FALSE(token.empty());
  // The demo's GPU 2 is held idle by a forgotten notebook.
  const std::string config = dir.Write("agent.toml", R"([sampling]
interval_s = 0.2
[[alerts.rule]]
name = "GpuHeldIdle"
when = "held_idle"
for_s = 0
)");
  const int metrics_port = testing::FreePort();
  started.push_back(
      testing::Spawn(dir, "agent",
                     std::string(GLEANER_BINARY) + " agent --server http://127.0.0.1:" + port +
                         " --join-token-file " + token + " --name gpu-a --fake demo --config " +
                         config + " --metrics-listen 127.0.0.1:" + std::to_string(metrics_port) +
                         " --data-dir " + (dir.path() / "a").string() + " --for 60"));
  const Daemon& agent = started[1];
  EXPECT_TRUE(testing::WaitForLog(agent, "alert firing GpuHeldIdle")) << Slurp(agent.log);
  EXPECT_TRUE(testing::WaitForLog(agent, "reporting to the coordinator")) << Slurp(agent.log);

  auto endpoint = net::ParseServerUrl("http://127.0.0.1:" + std::to_string(metrics_port));
  ASSERT_TRUE(endpoint.ok());
  auto scraped = net::HttpCall(*endpoint, "GET", "/metrics", "");
  ASSERT_TRUE(scraped.ok()) << scraped.status().ToString() << Slurp(agent.log);
  EXPECT_EQ(scraped->first, 200);
  EXPECT_THAT(scraped->second, HasSubstr("gleaner_gpu_state{gpu=\"2\","));
  EXPECT_THAT(scraped->second, HasSubstr("hostname=\"gpu-a\",state=\"held_idle\"} 1\n"));
  EXPECT_THAT(scraped->second, HasSubstr("gleaner_preemptions_total{reason=\"owner_returned\"}"));
  EXPECT_THAT(scraped->second, HasSubstr(",daemon=\"agent\"} 1\n"));
  // Scheduling is the coordinator's: its latency is not an agent's metric.
  EXPECT_THAT(scraped->second, ::testing::Not(HasSubstr("gleaner_scheduling_latency_seconds")));
  // Only /metrics, and only read.
  auto other = net::HttpCall(*endpoint, "GET", "/v1/jobs", "");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->first, 404);
  auto posted = net::HttpCall(*endpoint, "POST", "/metrics", "{}");
  ASSERT_TRUE(posted.ok());
  EXPECT_EQ(posted->first, 405);
  for (const Daemon& d : started) kill(d.pid, SIGTERM);
}

}  // namespace
}  // namespace gleaner
