// The HTTP layer as an attacker meets it: framing read one way only, and
// clients that connect and send nothing (or trickle) hold no worker.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "net/socket_address.h"
#include "server/http_server.h"
#include "testing/raw_socket.h"

namespace gleaner::server {
namespace {

using ::testing::HasSubstr;

ParsedRequest Parse(const std::string& text) { return ParseRequest(text); }

TEST(ParseRequestTest, ReadsACompleteRequestAndWaitsForTheRest) {
  const std::string whole = "POST /v1/jobs HTTP/1.1\r\nContent-Length: 4\r\nX-A: b\r\n\r\nabcd";
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    EXPECT_EQ(Parse(whole.substr(0, cut)).kind, ParsedRequest::Kind::kIncomplete) << cut;
  }
  const ParsedRequest p = Parse(whole + "trailing");
  ASSERT_EQ(p.kind, ParsedRequest::Kind::kComplete);
  EXPECT_EQ(p.request.method, "POST");
  EXPECT_EQ(p.request.path, "/v1/jobs");
  EXPECT_EQ(p.request.body, "abcd");
  EXPECT_EQ(p.request.headers.at("x-a"), "b");
}

TEST(ParseRequestTest, RefusesFramingThatCouldBeReadTwoWays) {
  const std::vector<std::pair<std::string, int>> cases = {
      // Chunked bodies are not read; a proxy in front might read them.
      {"POST /v1/jobs HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 501},
      {"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: +4\r\n\r\nabcd", 400},
      {"POST / HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde", 400},
      {"POST / HTTP/1.1\r\nContent-Length : 4\r\n\r\nabcd", 400},
      {"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n", 413},
      {"GET v1/jobs HTTP/1.1\r\n\r\n", 400},
      {"GET http://x/v1/jobs HTTP/1.1\r\n\r\n", 400},
      {"GET /v1/jobs HTTP/2.0\r\n\r\n", 400},
      {"GET /v1/jobs\r\n\r\n", 400},
      {"GET /v1/jobs HTTP/1.1\r\nno colon here\r\n\r\n", 400},
      {"GET /v1/jobs HTTP/1.1\r\nX: " + std::string(20 * 1024, 'a') + "\r\n\r\n", 431},
      {"GET /v1/jobs HTTP/1.1\r\nX: " + std::string(20 * 1024, 'a'), 431},
  };
  for (const auto& [text, status] : cases) {
    const ParsedRequest p = Parse(text);
    EXPECT_EQ(p.kind, ParsedRequest::Kind::kError) << text.substr(0, 80);
    EXPECT_EQ(p.error_status, status) << text.substr(0, 80);
    EXPECT_FALSE(p.error.empty());
  }
}

class HttpHardeningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::move(HttpServer::ServeTcp("127.0.0.1", 0, [](const HttpRequest& r, const Peer&) {
                return HttpResponse{200, "{\"path\": \"" + r.path + "\"}"};
              })).value();
    endpoint_ = std::move(net::ParseServerUrl(server_->address())).value();
  }
  std::unique_ptr<HttpServer> server_;
  net::Endpoint endpoint_;
};

TEST_F(HttpHardeningTest, IdleConnectionsDoNotHoldUpOthers) {
  // More silent clients than the server has workers: before, each held a
  // worker for its whole read deadline and the next request waited.
  std::vector<int> idle;
  for (int i = 0; i < 100; ++i) {
    const int fd = gleaner::testing::ConnectLoopback(endpoint_.port);
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  const auto start = std::chrono::steady_clock::now();
  auto r = net::HttpCall(endpoint_, "GET", "/ping", "", "");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->first, 200);
  // Far below the 10 s read deadline the old design made it wait.
  EXPECT_LT(took, std::chrono::seconds(5));
  for (int fd : idle) close(fd);
}

TEST_F(HttpHardeningTest, MalformedRequestsGetTheirStatusNotAReset) {
  const int fd = gleaner::testing::ConnectLoopback(endpoint_.port);
  ASSERT_GE(fd, 0);
  // A megabyte of header: answered 431, not a connection reset.
  const std::string huge = "GET / HTTP/1.1\r\nX: " + std::string(1 << 20, 'a');
  size_t sent = 0;
  while (sent < huge.size()) {
    const ssize_t n = send(fd, huge.data() + sent, huge.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  EXPECT_THAT(gleaner::testing::ReadAll(fd, std::chrono::seconds(5)), HasSubstr("HTTP/1.1 431"));
  close(fd);

  const int chunked = gleaner::testing::ConnectLoopback(endpoint_.port);
  const std::string text =
      "POST /v1/jobs HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
  ASSERT_EQ(send(chunked, text.data(), text.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(text.size()));
  EXPECT_THAT(gleaner::testing::ReadAll(chunked, std::chrono::seconds(5)),
              HasSubstr("HTTP/1.1 501"));
  close(chunked);
}

TEST(HttpHardeningUnixTest, ASocketPathHoldingSomethingElseIsNotRemoved) {
  char dir_template[] = "/tmp/gleaner-sock.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string path = std::string(dir_template) + "/g.sock";
  ASSERT_EQ(symlink("/etc/hostname", path.c_str()), 0);
  auto s =
      HttpServer::ServeUnix(path, [](const HttpRequest&, const Peer&) { return HttpResponse{}; });
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("not a socket"));
  char target[64] = {};
  EXPECT_GT(readlink(path.c_str(), target, sizeof target - 1), 0);  // still there
  unlink(path.c_str());
  rmdir(dir_template);
}

TEST(HttpHardeningUnixTest, ASocketLeftByAKilledDaemonIsExplained) {
  char dir_template[] = "/tmp/gleaner-sock.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  net::Endpoint left;
  left.unix_path = std::string(dir_template) + "/g.sock";
  {
    auto addr = net::UnixAddress(left.unix_path);
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&*addr), sizeof *addr), 0);
    close(fd);  // as kill -9 leaves it: the file, with no one listening
  }
  auto r = net::HttpCall(left, "GET", "/v1/whoami", "", "");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("no gleaner is running"));
  // And a new server replaces it.
  auto s = HttpServer::ServeUnix(left.unix_path, [](const HttpRequest&, const Peer&) {
    return HttpResponse{200, "{}"};
  });
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(net::HttpCall(left, "GET", "/v1/whoami", "", "").ok());
  s->reset();
  rmdir(dir_template);
}

}  // namespace
}  // namespace gleaner::server
