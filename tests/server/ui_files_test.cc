// The dashboard's files: served to anyone (they hold no data) with their
// content types and a Content-Security-Policy that keeps the page to this
// server, on the wire as well as in the handler's answer.
#include "server/ui_files.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "server/api.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace gleaner::server {
namespace {

using ::testing::HasSubstr;

std::string Header(const HttpResponse& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return v;
  }
  return "";
}

// The raw bytes of the answer to "GET `path`" on 127.0.0.1:`port`.
std::string RawGet(uint16_t port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer;
  char buf[8192];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;)
    answer.append(buf, static_cast<size_t>(n));
  close(fd);
  return answer;
}

class UiFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(store::SqliteStore::Open((dir_.path() / "g.db").string())).value();
    ApiOptions options;
    options.user_name = [](uint32_t uid) { return "u" + std::to_string(uid); };
    api_ = std::make_unique<Api>(*store_, clock_, options);
  }

  // As a caller over TCP without a token.
  HttpResponse Get(const std::string& path, const std::string& method = "GET") {
    return api_->Handle({method, path, {}, ""}, Peer{});
  }

  testing::TempDir dir_;
  core::ManualClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<Api> api_;
};

TEST_F(UiFilesTest, ThePageAndItsFilesNeedNoToken) {
  for (const char* path : {"/", "/index.html", "/?lang=zh-CN"}) {
    const HttpResponse page = Get(path);
    EXPECT_EQ(page.status, 200) << path;
    EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
    EXPECT_THAT(page.body, HasSubstr("<html"));
    EXPECT_THAT(page.body, HasSubstr("/ui/js/main.js"));
    EXPECT_EQ(Header(page, "Content-Security-Policy"), kDashboardPolicy);
    EXPECT_EQ(Header(page, "X-Content-Type-Options"), "nosniff");
  }
  const HttpResponse script = Get("/ui/js/main.js");
  EXPECT_EQ(script.status, 200);
  EXPECT_EQ(script.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(Get("/ui/style.css").content_type, "text/css; charset=utf-8");
  EXPECT_EQ(Get("/ui/strings.json").content_type, "application/json; charset=utf-8");
  EXPECT_EQ(Get("/ui/vendor/uPlot.iife.min.js").status, 200);
  // The data still needs one.
  EXPECT_EQ(Get("/v1/gpus").status, 401);
}

TEST_F(UiFilesTest, UnknownFilesAndOtherMethodsAreRefused) {
  const HttpResponse missing = Get("/ui/js/nothing.js");
  EXPECT_EQ(missing.status, 404);
  EXPECT_THAT(missing.body, HasSubstr("/ui/js/nothing.js"));
  EXPECT_EQ(Get("/ui/../gleaner.db").status, 404);
  EXPECT_EQ(Get("/", "POST").status, 405);
  EXPECT_EQ(Get("/ui/js/main.js", "DELETE").status, 405);
}

TEST_F(UiFilesTest, ThePolicyLoadsNothingFromElsewhere) {
  const std::string policy = kDashboardPolicy;
  EXPECT_THAT(policy, HasSubstr("default-src 'none'"));
  EXPECT_THAT(policy, HasSubstr("script-src 'self'"));
  EXPECT_THAT(policy, HasSubstr("connect-src 'self'"));
  EXPECT_THAT(policy, HasSubstr("frame-ancestors 'none'"));
  EXPECT_EQ(policy.find("unsafe"), std::string::npos);
  EXPECT_EQ(policy.find("http"), std::string::npos);
  EXPECT_EQ(policy.find('*'), std::string::npos);
}

TEST_F(UiFilesTest, TheHeadersGoOnTheWire) {
  auto server = HttpServer::ServeTcp(
      "127.0.0.1", 0, [this](const HttpRequest& r, const Peer& p) { return api_->Handle(r, p); });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const net::Endpoint tcp = std::move(net::ParseServerUrl((*server)->address())).value();
  const std::string answer = RawGet(tcp.port, "/");
  EXPECT_THAT(answer, ::testing::StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(answer, HasSubstr("\r\nContent-Type: text/html; charset=utf-8\r\n"));
  EXPECT_THAT(answer,
              HasSubstr("\r\nContent-Security-Policy: " + std::string(kDashboardPolicy) + "\r\n"));
  EXPECT_THAT(answer, HasSubstr("\r\n\r\n<!doctype html>"));
}

}  // namespace
}  // namespace gleaner::server
