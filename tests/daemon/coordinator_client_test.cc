// The agent's side of the coordinators against a coordinator that speaks
// real HTTP on loopback: joining with a one-time token, keeping the
// credential, and joining again only with a token not yet tried.
#include "daemon/coordinator_client.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <mutex>
#include <set>

#include "server/http_server.h"
#include "testing/temp_dir.h"

namespace gleaner::daemon {
namespace {

// A coordinator that knows some join tokens, spends each once, and takes
// reports from the credential it issued last.
class FakeCoordinator {
 public:
  explicit FakeCoordinator(std::set<std::string> tokens) : tokens_(std::move(tokens)) {
    auto served = server::HttpServer::ServeTcp(
        "127.0.0.1", 0,
        [this](const server::HttpRequest& r, const server::Peer&) { return Answer(r); });
    EXPECT_TRUE(served.ok()) << served.status().message();
    server_ = std::move(served).value();
  }

  std::vector<net::Endpoint> endpoints() const {
    return {net::ParseServerUrl(server_->address()).value()};  // "http://HOST:PORT"
  }
  int joins() const {
    std::lock_guard lock(mu_);
    return joins_;
  }
  // The host was replaced: its credential stops working.
  void CutOff() {
    std::lock_guard lock(mu_);
    credential_.clear();
  }

 private:
  server::HttpResponse Answer(const server::HttpRequest& r) {
    std::lock_guard lock(mu_);
    const nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
    if (r.path == "/v1/agents/join") {
      ++joins_;
      const std::string token = body.value("join_token", "");
      if (tokens_.erase(token) == 0) return {401, R"({"error":"join token spent or unknown"})"};
      credential_ = "agent." + body.value("name", "") + "." + std::to_string(joins_);
      return {200, nlohmann::json{{"credential", credential_}}.dump()};
    }
    const auto auth = r.headers.find("authorization");
    if (credential_.empty() || auth == r.headers.end() || auth->second != "Bearer " + credential_) {
      return {401, R"({"error":"credential refused"})"};
    }
    cluster::AgentReply reply;
    reply.orders = 3;
    return {200, cluster::ReplyToJson(reply).dump()};
  }

  mutable std::mutex mu_;
  std::set<std::string> tokens_;
  std::string credential_;
  int joins_ = 0;
  std::unique_ptr<server::HttpServer> server_;
};

class CoordinatorClientTest : public ::testing::Test {
 protected:
  void WriteToken(const std::string& token) {
    std::ofstream(token_file_) << token << "\n";
    chmod(token_file_.c_str(), 0600);
  }
  AgentIdentity Identity(bool with_token_file = true) const {
    return {dir_.path().string(), "gpu-a", with_token_file ? token_file_ : ""};
  }

  testing::TempDir dir_;
  const std::string token_file_ = (dir_.path() / "join.token").string();
  core::ManualClock clock_{core::FromUnixMicros(1'000'000'000'000)};
  std::vector<std::string> said_;
  const cluster::Log log_ = [this](const std::string& line) { said_.push_back(line); };
};

TEST_F(CoordinatorClientTest, JoinsOnceAndKeepsTheCredentialPrivate) {
  FakeCoordinator coordinator({"gjt_one"});
  Coordinators coordinators(coordinator.endpoints());
  WriteToken("gjt_one");
  auto reporter = AgentReporter::Join(Identity(), coordinators, clock_, log_);
  ASSERT_TRUE(reporter.ok()) << reporter.status().message();
  EXPECT_EQ((*reporter)->credential(), "agent.gpu-a.1");
  struct stat st {};
  ASSERT_EQ(stat((dir_.path() / "agent.credential").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto reply = (*reporter)->Report({});
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_EQ(reply->orders, 3u);

  // A restart takes the kept credential: the spent token is not sent again.
  auto again = AgentReporter::Join(Identity(), coordinators, clock_, log_);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ((*again)->credential(), "agent.gpu-a.1");
  EXPECT_EQ(coordinator.joins(), 1);
}

TEST_F(CoordinatorClientTest, AHostThatNeverJoinedIsToldHow) {
  FakeCoordinator coordinator({});
  Coordinators coordinators(coordinator.endpoints());
  auto reporter = AgentReporter::Join(Identity(false), coordinators, clock_, log_);
  ASSERT_FALSE(reporter.ok());
  EXPECT_EQ(reporter.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(reporter.status().message().find("gleaner agent-token create --host gpu-a"),
            std::string::npos)
      << reporter.status().message();
  EXPECT_EQ(coordinator.joins(), 0);
}

TEST_F(CoordinatorClientTest, CutOffItJoinsAgainOnlyWithAFreshTokenAndNotTooOften) {
  FakeCoordinator coordinator({"gjt_one", "gjt_two", "gjt_three"});
  Coordinators coordinators(coordinator.endpoints());
  WriteToken("gjt_one");
  auto reporter = AgentReporter::Join(Identity(), coordinators, clock_, log_);
  ASSERT_TRUE(reporter.ok()) << reporter.status().message();

  // Cut off with the spent token still in the file: refused, no join.
  coordinator.CutOff();
  auto refused = (*reporter)->Report({});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), core::StatusCode::kUnauthenticated);
  EXPECT_EQ(coordinator.joins(), 1);

  // An admin's new token: it joins again and the report goes through.
  WriteToken("gjt_two");
  auto rejoined = (*reporter)->Report({});
  ASSERT_TRUE(rejoined.ok()) << rejoined.status().message();
  EXPECT_EQ((*reporter)->credential(), "agent.gpu-a.2");
  EXPECT_EQ(coordinator.joins(), 2);

  // Cut off again at once: a third token waits out the 30 s between joins.
  coordinator.CutOff();
  WriteToken("gjt_three");
  EXPECT_FALSE((*reporter)->Report({}).ok());
  EXPECT_EQ(coordinator.joins(), 2);
  clock_.Advance(core::Seconds(31));
  auto later = (*reporter)->Report({});
  ASSERT_TRUE(later.ok()) << later.status().message();
  EXPECT_EQ(coordinator.joins(), 3);
}

TEST_F(CoordinatorClientTest, CoordinatorUrlsAreCheckedAndTlsFilesNeedHttps) {
  EXPECT_FALSE(ParseCoordinatorUrls("", {}).ok());
  EXPECT_FALSE(ParseCoordinatorUrls(",", {}).ok());
  auto two = ParseCoordinatorUrls("http://a:7380,http://b:7380", {});
  ASSERT_TRUE(two.ok()) << two.status().message();
  EXPECT_EQ(two->size(), 2u);
  net::TlsFiles tls;
  tls.ca = "/nonexistent/ca.pem";
  auto plain = ParseCoordinatorUrls("http://a:7380", tls);
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("https://"), std::string::npos);
}

}  // namespace
}  // namespace gleaner::daemon
