// Alerts reach a real HTTP receiver on loopback, in Alertmanager's format,
// and failed deliveries are retried.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "agent/alert_webhook.h"
#include "net/http_client.h"
#include "net/socket_address.h"
#include "net/tls.h"
#include "server/http_server.h"
#include "testing/http_receiver.h"
#include "testing/temp_dir.h"
#include "testing/test_pki.h"

namespace gleaner::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

observe::AlertEvent Event(bool firing) {
  observe::AlertEvent e;
  e.rule = "GpuHeldIdle";
  e.uuid = core::GpuUuid("GPU-1234");
  e.firing = firing;
  e.starts_at = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);
  e.ends_at = e.starts_at + core::Seconds(90);
  e.severity = "warning";
  e.summary = "held idle for 1h";
  e.users = {"bob"};
  return e;
}

TEST(AlertmanagerPayloadTest, HasTheWebhookShape) {
  auto doc = nlohmann::json::parse(AlertmanagerPayload({Event(true)}, "node-1"));
  EXPECT_EQ(doc["version"], "4");
  EXPECT_EQ(doc["status"], "firing");
  ASSERT_EQ(doc["alerts"].size(), 1u);
  const auto& a = doc["alerts"][0];
  EXPECT_EQ(a["labels"]["alertname"], "GpuHeldIdle");
  EXPECT_EQ(a["labels"]["gpu_uuid"], "GPU-1234");
  EXPECT_EQ(a["labels"]["hostname"], "node-1");
  EXPECT_EQ(a["labels"]["users"], "bob");
  EXPECT_EQ(a["annotations"]["summary"], "held idle for 1h");
  EXPECT_EQ(a["startsAt"], "2027-01-15T08:00:00.000Z");
  EXPECT_EQ(a["endsAt"], "0001-01-01T00:00:00Z");
  auto resolved = nlohmann::json::parse(AlertmanagerPayload({Event(false)}, "node-1"));
  EXPECT_EQ(resolved["status"], "resolved");
  EXPECT_EQ(resolved["alerts"][0]["endsAt"], "2027-01-15T08:01:30.000Z");
}

TEST(AlertWebhookTest, DeliversFiringThenResolved) {
  testing::HttpReceiver receiver;
  std::vector<std::string> log;
  AlertWebhook hook({receiver.url(), "node-1"}, [&](const std::string& l) { log.push_back(l); });
  hook.Send({Event(true)});
  hook.Send({Event(false)});
  hook.Send({});  // nothing to say: nothing sent
  ASSERT_TRUE(hook.WaitIdle(core::Seconds(10)));
  ASSERT_EQ(receiver.bodies().size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(receiver.bodies()[0])["status"], "firing");
  EXPECT_EQ(nlohmann::json::parse(receiver.bodies()[1])["status"], "resolved");
  EXPECT_EQ(hook.delivered(), 2);
  EXPECT_TRUE(log.empty());
}

TEST(AlertWebhookTest, RetriesWithBackoffUntilAccepted) {
  testing::HttpReceiver receiver({500, 503, 200});
  std::vector<std::string> log;
  AlertWebhook::Options options{receiver.url(), "node-1"};
  options.first_backoff = core::Milliseconds(20);
  AlertWebhook hook(options, [&](const std::string& l) { log.push_back(l); });
  hook.Send({Event(true)});
  ASSERT_TRUE(hook.WaitIdle(core::Seconds(10)));
  EXPECT_EQ(receiver.requests(), 3);
  EXPECT_EQ(hook.delivered(), 1);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_THAT(log[0], HasSubstr("delivery 1/6"));
  EXPECT_THAT(log[0], HasSubstr("HTTP 500"));
}

TEST(AlertWebhookTest, GivesUpAfterMaxAttempts) {
  std::vector<std::string> log;
  AlertWebhook::Options options{"http://127.0.0.1:1/hook", "node-1"};  // nothing listens
  options.max_attempts = 3;
  options.first_backoff = core::Milliseconds(5);
  AlertWebhook hook(options, [&](const std::string& l) { log.push_back(l); });
  hook.Send({Event(true)});
  ASSERT_TRUE(hook.WaitIdle(core::Seconds(10)));
  EXPECT_EQ(hook.dropped(), 1);
  EXPECT_THAT(log.back(), HasSubstr("gave up"));
}

TEST(PostJsonTest, BadUrls) {
  EXPECT_THAT(net::PostJson("ftp://x/hook", "{}", core::Seconds(1)).status().message(),
              HasSubstr("must start with https:// or http://"));
  EXPECT_THAT(net::PostJson("http:///hook", "{}", core::Seconds(1)).status().message(),
              HasSubstr("has no host"));
  EXPECT_FALSE(net::PostJson("http://no-such-host.invalid/hook", "{}", core::Seconds(1)).ok());
}

TEST(PostJsonTest, UrlsNameTheirPortAndPathOrTakeTheDefaults) {
  auto u = net::ParseHttpUrl("https://hooks.example.com/T1/B2?x=1");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_TRUE(u->endpoint.tls);
  EXPECT_EQ(u->endpoint.host, "hooks.example.com");
  EXPECT_EQ(u->endpoint.port, 443);
  EXPECT_EQ(u->target, "/T1/B2?x=1");
  u = net::ParseHttpUrl("http://[::1]:8080");
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE(u->endpoint.tls);
  EXPECT_EQ(u->endpoint.host, "::1");
  EXPECT_EQ(u->endpoint.port, 8080);
  EXPECT_EQ(u->target, "/");
  EXPECT_EQ(net::ParseHttpUrl("http://[::1]/a")->endpoint.port, 80);
  EXPECT_EQ(net::ParseHttpUrl("http://h?q=1")->target, "/?q=1");
  EXPECT_THAT(net::ParseHttpUrl("http://h:99999/x").status().message(), HasSubstr("not HOST:PORT"));
}

TEST(PostJsonTest, PostsTheBodyToThePathNamingTheHost) {
  std::atomic<bool> seen{false};
  server::HttpRequest got;
  auto receiver = server::HttpServer::ServeTcp(
      "127.0.0.1", 0, [&](const server::HttpRequest& r, const server::Peer&) {
        if (!seen.exchange(true)) got = r;
        return server::HttpResponse{202, ""};
      });
  ASSERT_TRUE(receiver.ok());
  const std::string host_port = (*receiver)->address().substr(7);  // after http://
  auto posted =
      net::PostJson("http://" + host_port + "/hooks/a?b=c", R"({"a":1})", core::Seconds(5));
  ASSERT_TRUE(posted.ok()) << posted.status().ToString();
  EXPECT_EQ(*posted, 202);
  ASSERT_TRUE(seen.load());
  EXPECT_EQ(got.method, "POST");
  EXPECT_EQ(got.path, "/hooks/a?b=c");
  EXPECT_EQ(got.headers["host"], host_port);
  EXPECT_EQ(got.headers["content-type"], "application/json");
  EXPECT_EQ(got.body, R"({"a":1})");
}

// Receivers are named by URL: the host is looked up, not only read as a
// numeric address. "127.1" is a name getaddrinfo resolves (inet_aton's short
// form) without DNS, which inet_pton refuses.
TEST(PostJsonTest, AReceiverNamedByAHostNameIsLookedUp) {
  auto receiver = server::HttpServer::ServeTcp("127.0.0.1", 0,
                                               [](const server::HttpRequest&, const server::Peer&) {
                                                 return server::HttpResponse{204, ""};
                                               });
  ASSERT_TRUE(receiver.ok());
  const std::string port = (*receiver)->address().substr((*receiver)->address().rfind(':') + 1);
  auto posted = net::PostJson("http://127.1:" + port + "/hook", "{}", core::Seconds(5));
  ASSERT_TRUE(posted.ok()) << posted.status().ToString();
  EXPECT_EQ(*posted, 204);
  auto looked_up = net::LookupTcp("127.1", 80);
  ASSERT_TRUE(looked_up.ok()) << looked_up.status().ToString();
  ASSERT_FALSE(looked_up->empty());
  EXPECT_EQ(net::PeerAddress(looked_up->front().storage), "127.0.0.1");
}

TEST(PostJsonTest, AnUnreachableReceiverIsNamedAsTheWebhook) {
  auto posted = net::PostJson("http://127.0.0.1:1/hook", "{}", core::Seconds(2));
  ASSERT_FALSE(posted.ok());
  EXPECT_THAT(posted.status().message(),
              HasSubstr("cannot reach the webhook at http://127.0.0.1:1"));
  EXPECT_THAT(posted.status().message(), Not(HasSubstr("gleaner up")));
}

TEST(PostJsonTest, HttpsChecksTheReceiversCertificate) {
  testing::TempDir dir;
  const testing::TestPki pki = testing::MakeTestPki(dir.path().string());
  auto tls = net::TlsContext::ForServer({pki.server_cert, pki.server_key});
  ASSERT_TRUE(tls.ok()) << tls.status().ToString();
  std::atomic<int> received{0};
  auto receiver = server::HttpServer::ServeTcp(
      "127.0.0.1", 0,
      [&](const server::HttpRequest&, const server::Peer&) {
        ++received;
        return server::HttpResponse{204, ""};
      },
      *tls);
  ASSERT_TRUE(receiver.ok());
  // Signed by a CA the system does not know: refused before anything is sent.
  const std::string url = "https://" + (*receiver)->address().substr(8) + "/hook";
  auto posted = net::PostJson(url, "{}", core::Seconds(5));
  ASSERT_FALSE(posted.ok());
  EXPECT_THAT(posted.status().message(), HasSubstr("signed by a CA this client does not trust"));
  EXPECT_EQ(received.load(), 0);
}

}  // namespace
}  // namespace gleaner::agent
