// Clients that hold connections instead of using them: kept open by the
// thousand, answers never read, TLS handshakes started by the hundred. Each
// once took descriptors or workers that other users needed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "net/socket_address.h"
#include "server/connection_pool.h"
#include "server/http_server.h"
#include "testing/raw_socket.h"
#include "testing/temp_dir.h"
#include "testing/test_pki.h"

namespace gleaner::server {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using gleaner::testing::ClosedWithin;
using gleaner::testing::ConnectLoopback;
using gleaner::testing::ReadSome;
using gleaner::testing::SendAll;

constexpr char kPing[] = "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n";

HttpResponse Answer(const HttpRequest& r, const Peer&) {
  if (r.path == "/big") return HttpResponse{200, std::string(2 << 20, 'x')};
  return HttpResponse{200, "{\"path\": \"" + r.path + "\"}"};
}

net::Endpoint Url(const std::string& address) {
  return std::move(net::ParseServerUrl(address)).value();
}

uint16_t PortOf(const HttpServer& server) { return Url(server.address()).port; }

// A connection from `from` that asked once and was answered, kept open by
// both sides: what a client with a connection pool leaves behind.
int KeptAlive(uint16_t port, const char* from) {
  const int fd = ConnectLoopback(port, from);
  if (fd < 0 || !SendAll(fd, kPing)) return -1;
  return fd;
}

void CloseAll(const std::vector<int>& fds) {
  for (int fd : fds) close(fd);
}

// Before: a connection kept open with no request under way counted toward
// no peer's limit, so two clients took 20,000 descriptors in 4 s and the
// daemon could no longer open its own files.
TEST(ConnectionLimitsTest, KeptAliveConnectionsCountTowardTheirPeersLimit) {
  ConnectionPool pool({64, 8});
  auto server = std::move(HttpServer::ServeTcp("127.0.0.1", 0, Answer, nullptr, &pool)).value();
  std::vector<int> held;
  for (int i = 0; i < 8; ++i) {
    const int fd = KeptAlive(PortOf(*server), "127.0.0.2");
    ASSERT_GE(fd, 0);
    EXPECT_THAT(ReadSome(fd, 5000ms), HasSubstr("HTTP/1.1 200")) << i;
    held.push_back(fd);
  }
  EXPECT_EQ(pool.open_by("127.0.0.2"), 8u);
  const int ninth = KeptAlive(PortOf(*server), "127.0.0.2");
  ASSERT_GE(ninth, 0);
  const std::string refused = ReadSome(ninth, 5000ms);
  EXPECT_THAT(refused, HasSubstr("HTTP/1.1 429"));
  EXPECT_THAT(refused, HasSubstr("too many open connections from 127.0.0.2 (8)"));
  EXPECT_TRUE(ClosedWithin(ninth, 5000ms));
  close(ninth);
  // Another peer is served meanwhile, and a closed connection gives its
  // place back.
  const int other = KeptAlive(PortOf(*server), "127.0.0.3");
  EXPECT_THAT(ReadSome(other, 5000ms), HasSubstr("HTTP/1.1 200"));
  close(held.back());
  held.pop_back();
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (pool.open_by("127.0.0.2") > 7 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  const int again = KeptAlive(PortOf(*server), "127.0.0.2");
  EXPECT_THAT(ReadSome(again, 5000ms), HasSubstr("HTTP/1.1 200"));
  CloseAll(held);
  close(other);
  close(again);
}

TEST(ConnectionLimitsTest, AFullPoolClosesTheConnectionIdleLongestForANewPeer) {
  ConnectionPool pool({16, 8});
  auto server = std::move(HttpServer::ServeTcp("127.0.0.1", 0, Answer, nullptr, &pool)).value();
  std::vector<int> held;
  for (const char* from : {"127.0.0.2", "127.0.0.3"}) {
    for (int i = 0; i < 8; ++i) {
      const int fd = KeptAlive(PortOf(*server), from);
      ASSERT_THAT(ReadSome(fd, 5000ms), HasSubstr("HTTP/1.1 200"));
      held.push_back(fd);
    }
  }
  EXPECT_EQ(pool.open(), 16u);
  const int newcomer = KeptAlive(PortOf(*server), "127.0.0.4");
  EXPECT_THAT(ReadSome(newcomer, 5000ms), HasSubstr("HTTP/1.1 200"));
  // The first kept open made room.
  EXPECT_TRUE(ClosedWithin(held.front(), 5000ms));
  EXPECT_LE(pool.open(), 16u);
  CloseAll(held);
  close(newcomer);
}

TEST(ConnectionLimitsTest, TheLimitsFollowTheDescriptorLimit) {
  const size_t budget = ConnectionDescriptorBudget();
  const ConnectionLimits tcp = TcpConnectionLimits();
  const ConnectionLimits unix_socket = UnixConnectionLimits();
  EXPECT_GT(budget, 0u);
  // Together they leave the daemon its reserve.
  EXPECT_LE(tcp.total + unix_socket.total, budget);
  EXPECT_GE(unix_socket.total, budget / 4);
  EXPECT_LE(tcp.total, 65536u);
  EXPECT_LE(tcp.per_peer, 256u);
  EXPECT_GE(tcp.per_peer, 1u);
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_cur != RLIM_INFINITY) {
    EXPECT_LT(budget, limit.rlim_cur);
  }
}

// Root reaches a daemon under attack: on the socket it is never refused,
// whatever others hold.
TEST(ConnectionLimitsTest, RootOnTheSocketIsAlwaysServed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  gleaner::testing::TempDir dir;
  ConnectionPool pool({2, 2});
  const std::string path = (dir.path() / "g.sock").string();
  auto server = std::move(HttpServer::ServeUnix(path, Answer, &pool)).value();
  net::Endpoint socket;
  socket.unix_path = path;
  std::vector<int> held;
  for (int i = 0; i < 6; ++i) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    auto addr = net::UnixAddress(path);
    ASSERT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr), 0);
    ASSERT_TRUE(SendAll(fd, kPing));
    EXPECT_THAT(ReadSome(fd, 5000ms), HasSubstr("HTTP/1.1 200")) << i;
    held.push_back(fd);
  }
  EXPECT_EQ(pool.open(), 6u);
  CloseAll(held);
}

// Before: a client that pipelined requests and read the answers slowly kept
// a worker blocked in each write; 20 of them made everyone else wait
// seconds. Answers are now written by the reader as clients take them.
TEST(ConnectionLimitsTest, ClientsThatNeverReadTheirAnswersHoldNoWorker) {
  auto server = std::move(HttpServer::ServeTcp("127.0.0.1", 0, Answer)).value();
  std::vector<int> slow;
  std::string pipelined;
  for (int i = 0; i < 8; ++i) pipelined += "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
  for (int i = 0; i < 20; ++i) {
    const int fd = ConnectLoopback(PortOf(*server), "127.0.0.5");
    ASSERT_GE(fd, 0);
    int small = 4096;  // fills at once
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    ASSERT_TRUE(SendAll(fd, pipelined));
    slow.push_back(fd);
  }
  std::this_thread::sleep_for(300ms);  // the answers are made and stuck
  for (int i = 0; i < 20; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto r = net::HttpCall(Url(server->address()), "GET", "/ping", "", "");
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->first, 200);
    // A liveness bound, far above a request's milliseconds: before, each
    // stuck write held a worker for its 5 s send timeout, again and again.
    EXPECT_LT(took, 4s) << i;
  }
  CloseAll(slow);
}

class HandshakeFloodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = gleaner::testing::MakeTestPki(dir_.path().string());
    auto tls = net::TlsContext::ForServer({pki_.server_cert, pki_.server_key});
    ASSERT_TRUE(tls.ok()) << tls.status().ToString();
    server_ = std::move(HttpServer::ServeTcp("127.0.0.1", 0, Answer, *tls, &pool_)).value();
  }
  gleaner::testing::TempDir dir_;
  gleaner::testing::TestPki pki_;
  ConnectionPool pool_{{1024, 256}};
  std::unique_ptr<HttpServer> server_;
};

// Before: every connection started a handshake on the reader thread, for
// as many as one peer cared to open; a flood slowed every other client's
// requests a hundredfold.
TEST_F(HandshakeFloodTest, APeerStartsHandshakesOnlyAtItsRate) {
  std::vector<int> flood;
  for (int i = 0; i < 100; ++i) {
    const int fd = ConnectLoopback(PortOf(*server_), "127.0.0.6");
    ASSERT_GE(fd, 0);
    flood.push_back(fd);
  }
  int closed = 0;
  for (int fd : flood) closed += ClosedWithin(fd, 20ms) ? 1 : 0;
  // The burst (40), and what refilled while they came, are kept.
  EXPECT_GE(closed, 30) << "a flood beyond the burst is closed at once";
  EXPECT_LE(closed, 60);
  // Another peer shakes hands and is served.
  net::Endpoint client = Url(server_->address());
  auto tls = net::TlsContext::ForClient({.ca = pki_.ca});
  ASSERT_TRUE(tls.ok());
  client.tls_context = *tls;
  auto r = net::HttpCall(client, "GET", "/ping", "", "");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->first, 200);
  CloseAll(flood);
}

}  // namespace
}  // namespace gleaner::server
