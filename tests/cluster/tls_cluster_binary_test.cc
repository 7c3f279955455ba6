// A cluster over TLS with client certificates: a coordinator that requires
// them serves agents and clients that present one signed by its CA, and
// tells the others what is wrong. The agent long-polls, so a job starts
// long before its next report.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include "testing/gleaner_up.h"
#include "testing/run_gleaner.h"
#include "testing/spawn_daemon.h"
#include "testing/temp_dir.h"
#include "testing/test_pki.h"

namespace gleaner {
namespace {

using testing::Daemon;
using ::testing::HasSubstr;
using testing::Slurp;

class TlsClusterBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = testing::MakeTestPki(dir_.path().string());
    secret_ = dir_.Write("cluster.secret", std::string(64, 'a'));
    chmod(secret_.c_str(), 0600);
    server_data_ = (dir_.path() / "s").string();
    url_ = "https://127.0.0.1:" + std::to_string(testing::FreePort());
  }
  void TearDown() override {
    for (const Daemon& d : started_) kill(d.pid, SIGKILL);
  }
  Daemon Start(const std::string& name, const std::string& command) {
    Daemon d = testing::Spawn(dir_, name, command);
    started_.push_back(d);
    return d;
  }
  std::string Agent(const std::string& tls) {
    return std::string(GLEANER_BINARY) + " agent --server " + url_ + " --join-token-file " +
           join_token_ + " --name gpu-a --fake demo --data-dir " + (dir_.path() / "a").string() +
           " " + tls;
  }
  std::string ClientTls() const {
    return " --ca-file " + pki_.ca + " --tls-cert " + pki_.client_cert + " --tls-key " +
           pki_.client_key;
  }

  testing::TempDir dir_;
  testing::TestPki pki_;
  std::string secret_;
  std::string server_data_;
  std::string url_;
  std::string join_token_;
  std::vector<Daemon> started_;
};

TEST_F(TlsClusterBinaryTest, OnlyClientsWithTheCasCertificatesReachTheCoordinator) {
  const Daemon server =
      Start("server", std::string(GLEANER_BINARY) + " server --data-dir " + server_data_ +
                          " --listen " + url_.substr(8) + " --join-secret-file " + secret_ +
                          " --tls-cert " + pki_.server_cert + " --tls-key " + pki_.server_key +
                          " --ca-file " + pki_.ca + " --require-client-cert --for 60");
  ASSERT_TRUE(testing::WaitForLog(server, "leading")) << Slurp(server.log);
  EXPECT_THAT(Slurp(server.log), HasSubstr("coordinator on " + url_));
  join_token_ = testing::JoinTokenFile(dir_, server_data_, "gpu-a");
  ASSERT_FALSE(join_token_.empty());

  // Without a client certificate the agent cannot join, and says why.
  const testing::Outcome bare = testing::RunBinary(Agent("--ca-file " + pki_.ca), "--for 5");
  EXPECT_NE(bare.rc, 0);
  EXPECT_THAT(bare.err, HasSubstr("requires a client certificate"));
  // Reports come every 30 s: only the long poll can start a job sooner.
  const Daemon agent = Start("agent", Agent(ClientTls()) + " --interval 30 --for 60");
  ASSERT_TRUE(testing::WaitForLog(agent, "reporting to the coordinator")) << Slurp(agent.log);

  const testing::Outcome token = testing::Gleaner("--data-dir " + server_data_ + " token create" +
                                                  testing::OrdinaryUserFlag());
  ASSERT_EQ(token.rc, 0) << token.err;
  const std::string bearer = token.out.substr(token.out.find("glt_"), 68);
  const std::string remote = "--server " + url_ + " --token " + bearer;
  // A client that trusts only the system's CAs, or speaks plain HTTP, is
  // told what to change.
  const testing::Outcome untrusted = testing::Gleaner(remote + " queue");
  EXPECT_NE(untrusted.rc, 0);
  EXPECT_THAT(untrusted.err, HasSubstr("--ca-file"));
  const testing::Outcome plain =
      testing::Gleaner("--server http://" + url_.substr(8) + " --token " + bearer + " queue");
  EXPECT_NE(plain.rc, 0);
  EXPECT_THAT(plain.err, HasSubstr("this port speaks TLS: use https://"));

  const auto before = std::chrono::steady_clock::now();
  const testing::Outcome submitted = testing::Gleaner(
      remote + ClientTls() +
      " submit --gpus 1 --workdir /tmp -- sh -c 'echo hello from gpu-a; sleep 30'");
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  ASSERT_TRUE(testing::WaitForLog(agent, "job 1 started", 20)) << Slurp(agent.log);
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(20));
  const testing::Outcome queue = testing::Gleaner(remote + ClientTls() + " queue");
  EXPECT_EQ(queue.rc, 0) << queue.err;
  EXPECT_THAT(queue.out, HasSubstr("running"));
  // The job's output is on the agent's host; the coordinator fetches it.
  testing::Outcome logs;
  for (int i = 0; i < 50; ++i) {
    logs = testing::Gleaner(remote + ClientTls() + " logs 1");
    if (logs.out.find("hello") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(logs.rc, 0) << logs.err;
  EXPECT_EQ(logs.out, "hello from gpu-a\n") << logs.err;
}

}  // namespace
}  // namespace gleaner
