// `gleaner server`, `gleaner agent` and `gleaner monitor` read their config
// again on SIGHUP,
// as `gleaner up` does (tests/cli/governance_binary_test.cc): a file with
// an error changes nothing and says where it is wrong; a good one takes
// effect without a restart, and what it changed that needs one is named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <sstream>

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
using json = nlohmann::json;

// The first server's config; each test writes the next one over it.
constexpr char kServerConfig[] = "[ui]\nanonymous_read = true\n";

class ReloadBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string secret = dir_.Write("cluster.secret", std::string(64, 'r'));
    chmod(secret.c_str(), 0600);
    server_data_ = (dir_.path() / "s").string();
    port_ = std::to_string(testing::FreePort());
    server_config_ = dir_.Write("server.toml", kServerConfig);
    started_.push_back(testing::Spawn(dir_, "server",
                                      std::string(GLEANER_BINARY) + " server --data-dir " +
                                          server_data_ + " --config " + server_config_ +
                                          " --listen 127.0.0.1:" + port_ + " --join-secret-file " +
                                          secret + " --for 120"));
    ASSERT_TRUE(testing::WaitForLog(started_[0], "leading")) << Slurp(started_[0].log);
  }
  void TearDown() override {
    for (const Daemon& d : started_) kill(d.pid, SIGTERM);
  }

  // Sends SIGHUP to `d` and waits for what it says of it.
  bool Hangup(const Daemon& d, const std::string& said) {
    const int before = testing::CountInLog(d, said);
    if (kill(d.pid, SIGHUP) != 0) return false;
    for (int i = 0; i < 600; ++i) {
      if (testing::CountInLog(d, said) > before) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  testing::TempDir dir_;
  std::string server_data_;
  std::string port_;
  std::string server_config_;
  std::vector<Daemon> started_;
};

TEST_F(ReloadBinaryTest, TheServerTakesUpNewRulesForSubmitsAndPlacement) {
  const Daemon& server = started_[0];
  const testing::Outcome made = testing::Gleaner("--data-dir " + server_data_ + " token create" +
                                                 testing::OrdinaryUserFlag());
  ASSERT_EQ(made.rc, 0) << made.err;
  const std::string token = made.out.substr(made.out.find("glt_"), 68);
  const auto critical_job_state = [&] {
    const std::string at = "--server http://127.0.0.1:" + port_ + " --token " + token;
    const testing::Outcome submitted =
        testing::Gleaner(at + " submit --priority-class critical -- true");
    EXPECT_EQ(submitted.rc, 0) << submitted.err;
    const std::string id =
        std::to_string(std::stoll("0" + submitted.out.substr(submitted.out.rfind(' ') + 1)));
    const testing::Outcome shown = testing::Gleaner(at + " show " + id);
    const json job = json::parse(shown.out, nullptr, false);
    return job.is_object() ? job.value("state", "") : "(no job: " + shown.err + ")";
  };
  EXPECT_EQ(critical_job_state(), "queued");  // no host has joined

  dir_.Write("server.toml", "[rules.class.critical]\napproval = \"sometimes\"\n");
  ASSERT_TRUE(Hangup(server, "the running config stays")) << Slurp(server.log);
  EXPECT_THAT(Slurp(server.log), HasSubstr(server_config_ + ":2:"));
  EXPECT_EQ(critical_job_state(), "queued");

  dir_.Write("server.toml",
             "[rules.class.critical]\napproval = \"always\"\n"
             "[scheduler]\nmin_runtime_s = 0\n");
  ASSERT_TRUE(Hangup(server, "read again")) << Slurp(server.log);
  EXPECT_THAT(Slurp(server.log),
              HasSubstr("read again; [projects], [rules], [scheduler], [sessions] in effect; [ui] "
                        "changed and take effect at the next restart"));
  EXPECT_TRUE(testing::WaitForLog(server, "leading afresh on the config read again"))
      << Slurp(server.log);
  EXPECT_EQ(critical_job_state(), "pending_approval");
  // The coordinator started afresh still leads, and still serves.
  EXPECT_TRUE(testing::WaitForLog(server, "leading: this server now schedules", 5));
  EXPECT_EQ(testing::Gleaner("--data-dir " + server_data_ + " queue").rc, 0);

  ASSERT_TRUE(Hangup(server, "is unchanged")) << Slurp(server.log);
}

// Whether the agent's /metrics say the demo's empty GPU 3 is idle.
bool ThirdGpuIdle(const net::Endpoint& metrics) {
  auto scraped = net::HttpCall(metrics, "GET", "/metrics", "");
  if (!scraped.ok()) return false;
  std::istringstream lines(scraped->second);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("gleaner_gpu_state{gpu=\"3\",", 0) == 0 &&
        line.find("state=\"idle\"} 1") != std::string::npos) {
      return true;
    }
  }
  return false;
}

TEST_F(ReloadBinaryTest, TheAgentTakesUpNewIdleRules) {
  const std::string token = testing::JoinTokenFile(dir_, server_data_, "gpu-a");
  ASSERT_FALSE(token.empty());
  // Every reading counts as busy, even the empty GPU's 0 %.
  const std::string strict =
      "[sampling]\ninterval_s = 0.2\n[idle]\nidle_after_s = 1\nbusy_utilization_pct = 0\n";
  const std::string config = dir_.Write("agent.toml", strict);
  const int metrics_port = testing::FreePort();
  started_.push_back(
      testing::Spawn(dir_, "agent",
                     std::string(GLEANER_BINARY) + " agent --server http://127.0.0.1:" + port_ +
                         " --join-token-file " + token + " --name gpu-a --fake demo --config " +
                         config + " --metrics-listen 127.0.0.1:" + std::to_string(metrics_port) +
                         " --data-dir " + (dir_.path() / "a").string() + " --for 120"));
  const Daemon& agent = started_[1];
  ASSERT_TRUE(testing::WaitForLog(agent, "reporting to the coordinator")) << Slurp(agent.log);
  auto metrics = net::ParseServerUrl("http://127.0.0.1:" + std::to_string(metrics_port));
  ASSERT_TRUE(metrics.ok());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_FALSE(ThirdGpuIdle(*metrics)) << "idle at 0 % with every reading busy";

  dir_.Write("agent.toml", "[idle]\nbusy_utilization_pct = 500\n");
  ASSERT_TRUE(Hangup(agent, "the running config stays")) << Slurp(agent.log);
  EXPECT_THAT(Slurp(agent.log), HasSubstr("busy_utilization_pct"));

  dir_.Write("agent.toml",
             "[sampling]\ninterval_s = 0.5\n[idle]\nidle_after_s = 1\n");  // busy at 10 %
  ASSERT_TRUE(Hangup(agent, "read again")) << Slurp(agent.log);
  EXPECT_THAT(Slurp(agent.log),
              HasSubstr("read again; [idle], [rules] in effect; [sampling] changed and take "
                        "effect at the next restart"));
  bool idle = false;
  for (int i = 0; i < 200 && !idle; ++i) {
    idle = ThirdGpuIdle(*metrics);
    if (!idle) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(idle) << Slurp(agent.log);
}

TEST(MonitorReloadBinaryTest, TheMonitorTakesUpNewIdleRules) {
  testing::TempDir dir;
  const std::string config = dir.Write(
      "monitor.toml",
      "[sampling]\ninterval_s = 0.2\n[idle]\nidle_after_s = 1\nbusy_utilization_pct = 0\n");
  const Daemon monitor =
      testing::Spawn(dir, "monitor",
                     std::string(GLEANER_BINARY) + " monitor --fake demo --config " + config +
                         " --data-dir " + (dir.path() / "d").string() + " --for 60");
  const std::string third = "GPU 3 GPU-d891083c-464e-7078-2ef8-84c14c3b3243 ";
  ASSERT_TRUE(testing::WaitForLog(monitor, third + "- -> busy: utilization 0% at or above 0%"))
      << Slurp(monitor.log);
  dir.Write("monitor.toml", "[sampling]\ninterval_s = 0.2\n[idle]\nidle_after_s = 1\n");
  ASSERT_EQ(kill(monitor.pid, SIGHUP), 0);
  EXPECT_TRUE(testing::WaitForLog(monitor, "read again; [idle], [rules] in effect"))
      << Slurp(monitor.log);
  EXPECT_TRUE(testing::WaitForLog(monitor, third + "busy -> idle")) << Slurp(monitor.log);
  kill(monitor.pid, SIGTERM);
}

}  // namespace
}  // namespace gleaner
