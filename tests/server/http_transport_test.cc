// The HTTP transport as clients meet it: connections kept open between
// requests, answers that come later (long polls), and TLS, with the
// errors a user gets when the two sides disagree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "net/http_date.h"
#include "server/http_message.h"
#include "server/http_server.h"
#include "testing/raw_socket.h"
#include "testing/temp_dir.h"
#include "testing/test_pki.h"

namespace gleaner::server {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

HttpResponse Echo(const HttpRequest& r, const Peer&) {
  return HttpResponse{200, "{\"path\": \"" + r.path + "\"}"};
}

net::Endpoint Url(const std::string& address) {
  return std::move(net::ParseServerUrl(address)).value();
}

TEST(HttpDateTest, EveryAnswerCarriesTheServersClock) {
  auto server = HttpServer::ServeTcp("127.0.0.1", 0, Echo);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  net::HttpClient client(Url((*server)->address()));
  EXPECT_FALSE(client.server_date().has_value());
  const auto before = std::chrono::system_clock::now();
  ASSERT_TRUE(client.Call("GET", "/x", "").ok());
  ASSERT_TRUE(client.server_date().has_value());
  const auto off = *client.server_date() - before;
  EXPECT_LT(std::chrono::abs(off), 2s);
}

TEST(HttpDateTest, TheDateFormReadsBackInAnyCaseAndNothingElseDoes) {
  const core::TimePoint t = core::FromUnixMicros(784111777'000000);
  EXPECT_EQ(net::FormatHttpDate(t), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(net::ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), t);
  EXPECT_EQ(net::ParseHttpDate("sun, 06 nov 1994 08:49:37 gmt"), t);
  for (const char* bad :
       {"", "Sun, 06 Nov 1994 08:49:37", "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT junk",
        "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 99999999999999999999 08:49:37 GMT",
        "Sun, 0000000000000006 Nov 1994 08:49:37 GMT"}) {
    EXPECT_FALSE(net::ParseHttpDate(bad).has_value()) << bad;
  }
}

// A client started with the daemon finds its socket file before the daemon
// listens on it: it asks again for a moment instead of calling the socket
// stale.
TEST(UnixSocketTest, AClientWaitsForADaemonThatIsStillStarting) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "gleaner.sock").string();
  // The file is there, bound but not listening: what a starting daemon
  // leaves between bind and listen, and what a killed one leaves for good.
  const int bound = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  ASSERT_EQ(bind(bound, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  net::Endpoint endpoint;
  endpoint.unix_path = path;
  std::unique_ptr<HttpServer> server;
  std::thread starting([&] {
    std::this_thread::sleep_for(300ms);
    close(bound);
    server = std::move(HttpServer::ServeUnix(path, Echo)).value();
  });
  auto answer = net::HttpCall(endpoint, "GET", "/ready", "");
  starting.join();
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->second, "{\"path\": \"/ready\"}");
  // One that never comes: the socket was left by a daemon that is gone.
  server.reset();
  const int left = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_EQ(bind(left, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  auto stale = net::HttpCall(endpoint, "GET", "/ready", "");
  close(left);
  ASSERT_FALSE(stale.ok());
  EXPECT_THAT(stale.status().message(), HasSubstr("the socket was left by one that stopped"));
}

TEST(KeepAliveTest, AClientSendsItsRequestsOnOneConnection) {
  auto server = HttpServer::ServeTcp("127.0.0.1", 0, Echo);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  net::HttpClient client(Url((*server)->address()));
  for (const std::string path : {"/a", "/b", "/c"}) {
    auto r = client.Call("GET", path, "");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->second, "{\"path\": \"" + path + "\"}");
  }
  EXPECT_EQ(client.connections(), 1u);
}

TEST(KeepAliveTest, PipelinedRequestsAreAnsweredInTurn) {
  auto server = HttpServer::ServeTcp("127.0.0.1", 0, Echo);
  ASSERT_TRUE(server.ok());
  const int fd = gleaner::testing::ConnectLoopback(Url((*server)->address()).port);
  ASSERT_GE(fd, 0);
  const std::string two =
      "GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n"
      "Connection: close\r\n\r\n";
  ASSERT_EQ(send(fd, two.data(), two.size(), MSG_NOSIGNAL), static_cast<ssize_t>(two.size()));
  // It ends: the second request asked to close.
  const std::string answers = gleaner::testing::ReadAll(fd, 5000ms);
  close(fd);
  const size_t first = answers.find("/first");
  const size_t second = answers.find("/second");
  ASSERT_NE(first, std::string::npos) << answers;
  ASSERT_NE(second, std::string::npos) << answers;
  EXPECT_LT(first, second);
  EXPECT_THAT(answers, HasSubstr("Connection: keep-alive"));
  EXPECT_THAT(answers, HasSubstr("Connection: close"));
}

TEST(KeepAliveTest, AClientWhoseConnectionTheServerClosedSendsAgainOnANewOne) {
  auto first = HttpServer::ServeTcp("127.0.0.1", 0, Echo);
  ASSERT_TRUE(first.ok());
  const net::Endpoint where = Url((*first)->address());
  net::HttpClient client(where);
  ASSERT_TRUE(client.Call("GET", "/one", "").ok());
  first->reset();  // a restarted server: the kept connection is gone
  auto second = HttpServer::ServeTcp("127.0.0.1", where.port, Echo);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  auto r = client.Call("GET", "/two", "");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->second, "{\"path\": \"/two\"}");
  EXPECT_EQ(client.connections(), 2u);
}

// A long poll: /wait is answered when the test says so.
class LaterAnswerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ =
        std::move(HttpServer::ServeTcp("127.0.0.1", 0, [this](const HttpRequest& r, const Peer&) {
          if (r.path != "/wait") return Echo(r, {});
          HttpResponse timeout{200, "\"timed out\""};
          timeout.later =
              std::make_shared<LaterResponse>(LaterResponse{limit_, [this](auto answer) {
                                                              std::lock_guard lock(mu_);
                                                              waiting_.push_back(answer);
                                                            }});
          return timeout;
        })).value();
    endpoint_ = Url(server_->address());
  }
  size_t Waiting() {
    std::lock_guard lock(mu_);
    return waiting_.size();
  }

  core::Duration limit_ = core::Seconds(30);
  std::unique_ptr<HttpServer> server_;
  net::Endpoint endpoint_;
  std::mutex mu_;
  std::vector<std::function<void(HttpResponse)>> waiting_;
};

TEST_F(LaterAnswerTest, WaitsHoldNoWorkerAndAreAnsweredWhenReady) {
  constexpr int kWaits = 40;  // more than the server's 16 workers
  std::vector<std::thread> clients;
  std::atomic<int> ready{0};
  for (int i = 0; i < kWaits; ++i) {
    clients.emplace_back([&] {
      auto r = net::HttpCall(endpoint_, "POST", "/wait", "{}");
      if (r.ok() && r->second == "\"ready\"") ++ready;
    });
  }
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (Waiting() < kWaits && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(Waiting(), static_cast<size_t>(kWaits));
  // Every worker would be held if waits held them: this would wait too.
  const auto asked = std::chrono::steady_clock::now();
  auto ping = net::HttpCall(endpoint_, "GET", "/ping", "");
  ASSERT_TRUE(ping.ok()) << ping.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 2s);
  {
    std::lock_guard lock(mu_);
    for (auto& answer : waiting_) {
      answer(HttpResponse{200, "\"ready\""});
      answer(HttpResponse{200, "\"twice\""});  // only the first counts
    }
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(ready.load(), kWaits);
}

TEST_F(LaterAnswerTest, AWaitNobodyAnswersGetsItsTimeoutAnswer) {
  limit_ = std::chrono::milliseconds(300);
  auto r = net::HttpCall(endpoint_, "POST", "/wait", "{}");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->second, "\"timed out\"");
}

TEST_F(LaterAnswerTest, AnAnswerAfterTheServerStoppedIsHarmless) {
  std::thread client(
      [&] { net::HttpCall(endpoint_, "POST", "/wait", "{}").status().IgnoreError(); });
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (Waiting() < 1 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(Waiting(), 1u);
  server_.reset();
  client.join();
  waiting_.front()(HttpResponse{200, "\"late\""});  // nothing left to answer: no crash
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override { pki_ = gleaner::testing::MakeTestPki(dir_.path().string()); }

  std::unique_ptr<HttpServer> Serve(const net::TlsFiles& files) {
    auto tls = net::TlsContext::ForServer(files);
    EXPECT_TRUE(tls.ok()) << tls.status().ToString();
    return std::move(HttpServer::ServeTcp("127.0.0.1", 0, Echo, *tls)).value();
  }
  net::Endpoint Client(const std::string& address, const net::TlsFiles& files) {
    net::Endpoint e = Url(address);
    auto tls = net::TlsContext::ForClient(files);
    EXPECT_TRUE(tls.ok()) << tls.status().ToString();
    e.tls_context = *tls;
    return e;
  }

  gleaner::testing::TempDir dir_;
  gleaner::testing::TestPki pki_;
};

TEST_F(TlsTest, AClientThatTrustsTheCaIsServedOverOneConnection) {
  auto server = Serve({pki_.server_cert, pki_.server_key});
  EXPECT_EQ(server->address().rfind("https://127.0.0.1:", 0), 0u) << server->address();
  net::HttpClient client(Client(server->address(), {.ca = pki_.ca}));
  for (const std::string path : {"/a", "/b"}) {
    auto r = client.Call("GET", path, "");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->second, "{\"path\": \"" + path + "\"}");
  }
  EXPECT_EQ(client.connections(), 1u);
}

TEST_F(TlsTest, AClientThatDoesNotKnowTheCaIsToldToPassIt) {
  auto server = Serve({pki_.server_cert, pki_.server_key});
  auto r = net::HttpCall(Url(server->address()), "GET", "/a", "");  // the system's CAs only
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("signed by a CA this client does not trust"));
  EXPECT_THAT(r.status().message(), HasSubstr("--ca-file"));
}

TEST_F(TlsTest, PlainHttpToATlsPortIsAnsweredInPlainWords) {
  auto server = Serve({pki_.server_cert, pki_.server_key});
  net::Endpoint plain = Url(server->address());
  plain.tls = false;
  auto r = net::HttpCall(plain, "GET", "/a", "");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->first, 400);
  EXPECT_THAT(r->second, HasSubstr("this port speaks TLS: use https://"));
}

TEST_F(TlsTest, TlsToAPlainPortSaysSo) {
  auto server = HttpServer::ServeTcp("127.0.0.1", 0, Echo);
  ASSERT_TRUE(server.ok());
  net::Endpoint e = Client((*server)->address(), {.ca = pki_.ca});
  e.tls = true;
  const auto asked = std::chrono::steady_clock::now();
  auto r = net::HttpCall(e, "GET", "/a", "");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("speaks plain HTTP, not TLS: use http://"));
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 5s);  // not the read deadline
}

TEST_F(TlsTest, AnExpiredOrMismatchedCertificateIsRefusedAtStart) {
  auto expired = net::TlsContext::ForServer({pki_.expired_cert, pki_.expired_key});
  ASSERT_FALSE(expired.ok());
  EXPECT_THAT(expired.status().message(), HasSubstr("expired on"));
  EXPECT_THAT(expired.status().message(), HasSubstr("renew it"));
  auto client = net::TlsContext::ForClient({pki_.expired_cert, pki_.expired_key, pki_.ca});
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(client.status().message(), HasSubstr("expired on"));
  auto mismatched = net::TlsContext::ForServer({pki_.server_cert, pki_.client_key});
  ASSERT_FALSE(mismatched.ok());
  EXPECT_THAT(mismatched.status().message(), HasSubstr("does not belong to the certificate"));
  auto missing = net::TlsContext::ForServer({dir_.path().string() + "/nope.pem", pki_.server_key});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("nope.pem"));
}

TEST_F(TlsTest, AServerThatRequiresClientCertificatesServesOnlyItsCasClients) {
  auto server = Serve({pki_.server_cert, pki_.server_key, pki_.ca, true});
  auto anonymous = net::HttpCall(Client(server->address(), {.ca = pki_.ca}), "GET", "/a", "");
  ASSERT_FALSE(anonymous.ok());
  EXPECT_THAT(anonymous.status().message(), HasSubstr("requires a client certificate"));
  auto stranger = net::HttpCall(
      Client(server->address(), {pki_.stranger_cert, pki_.stranger_key, pki_.ca}), "GET", "/a", "");
  ASSERT_FALSE(stranger.ok());
  EXPECT_THAT(stranger.status().message(), HasSubstr("does not trust this client's certificate"));
  auto known = net::HttpCall(
      Client(server->address(), {pki_.client_cert, pki_.client_key, pki_.ca}), "GET", "/a", "");
  ASSERT_TRUE(known.ok()) << known.status().ToString();
  EXPECT_EQ(known->first, 200);
}

}  // namespace
}  // namespace gleaner::server
