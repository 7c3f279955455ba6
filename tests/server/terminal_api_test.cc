// A session's terminal crosses the Unix socket as a descriptor, once, to
// its owner; nothing else can carry it, and a daemon that runs no sessions
// refuses them at submit.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "core/terminal_handoff.h"
#include "net/http_client.h"
#include "server/api.h"
#include "server/descriptor_passing.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"
#include "testing/throwaway_user.h"

namespace gleaner::server {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class TerminalApiTest : public ::testing::Test {
 protected:
  void Serve(std::shared_ptr<core::TerminalHandoff> terminals) {
    store_ = std::move(store::SqliteStore::Open((dir_.path() / "g.db").string())).value();
    ApiOptions options;
    options.log_dir = dir_.path().string();
    options.user_name = [](uint32_t uid) { return uid == 0 ? "root" : "u" + std::to_string(uid); };
    options.uid_of = [](const std::string&) -> std::optional<uint32_t> { return std::nullopt; };
    options.terminals = std::move(terminals);
    api_ = std::make_unique<Api>(*store_, clock_, options);
    const auto handler = [this](const HttpRequest& r, const Peer& p) { return api_->Handle(r, p); };
    socket_ = (dir_.path() / "g.sock").string();
    unix_ = std::move(HttpServer::ServeUnix(socket_, handler)).value();
    tcp_server_ = std::move(HttpServer::ServeTcp("127.0.0.1", 0, handler)).value();
  }

  testing::TempDir dir_;
  core::ManualClock clock_{core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000)};
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<Api> api_;
  std::string socket_;
  std::unique_ptr<HttpServer> unix_;
  std::unique_ptr<HttpServer> tcp_server_;
};

TEST_F(TerminalApiTest, ItsOwnerReceivesTheTerminalOnceOverTheUnixSocket) {
  auto terminals = std::make_shared<core::TerminalHandoff>();
  Serve(terminals);
  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
  terminals->Offer(7, static_cast<uint32_t>(geteuid()), pipe_fds[0],
                   clock_.Now() + core::TerminalHandoff::kAttachWithin);

  // Over TCP no descriptor can travel (and no caller is named without a token).
  auto tcp = std::move(net::ParseServerUrl(tcp_server_->address())).value();
  auto over_tcp = net::HttpCall(tcp, "POST", "/v1/jobs/7/terminal", "", "");
  ASSERT_TRUE(over_tcp.ok());
  EXPECT_NE(over_tcp->first, 200);

  auto answer = CallForDescriptor(socket_, "POST", "/v1/jobs/7/terminal");
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->status, 200) << answer->body;
  ASSERT_GE(answer->fd, 0);
  EXPECT_EQ(json::parse(answer->body)["job"], 7);
  // It is the very descriptor offered: what goes in the pipe comes out here.
  ASSERT_EQ(write(pipe_fds[1], "hi", 2), 2);
  char got[2] = {};
  ASSERT_EQ(read(answer->fd, got, 2), 2);
  EXPECT_EQ(std::string(got, 2), "hi");
  EXPECT_NE(fcntl(answer->fd, F_GETFD) & FD_CLOEXEC, 0);
  close(answer->fd);
  close(pipe_fds[1]);

  auto again = CallForDescriptor(socket_, "POST", "/v1/jobs/7/terminal");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 404);
  EXPECT_EQ(again->fd, -1);
  EXPECT_THAT(again->body, HasSubstr("someone attached already"));
  auto wrong_method = CallForDescriptor(socket_, "GET", "/v1/jobs/7/terminal");
  ASSERT_TRUE(wrong_method.ok());
  EXPECT_EQ(wrong_method->status, 405);
}

TEST_F(TerminalApiTest, AnotherUsersSessionIsNotHandedOut) {
  auto terminals = std::make_shared<core::TerminalHandoff>();
  Serve(terminals);
  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
  close(pipe_fds[1]);
  const uint32_t me = static_cast<uint32_t>(geteuid());
  // Root's session, asked for by a throwaway user; else another uid's,
  // asked for by us.
  std::optional<testing::ThrowawayUser> other;
  if (me == 0) {
    other.emplace("gleanerpty");
    ASSERT_TRUE(other->ok());
    chmod(dir_.path().c_str(), 0755);
  }
  terminals->Offer(8, me == 0 ? 0 : me + 1, pipe_fds[0],
                   clock_.Now() + core::TerminalHandoff::kAttachWithin);
  const auto refused = [this] {
    auto answer = CallForDescriptor(socket_, "POST", "/v1/jobs/8/terminal");
    return answer.ok() && answer->status == 403 && answer->fd == -1 &&
           answer->body.find("another user's session") != std::string::npos;
  };
  if (me != 0) {
    EXPECT_TRUE(refused());
    return;
  }
  const pid_t child = fork();
  if (child == 0) {
    if (setgid(other->uid()) != 0 && setgid(65534) != 0) _exit(2);
    if (setuid(other->uid()) != 0) _exit(2);
    _exit(refused() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // Still there for its owner.
  auto mine = terminals->Take(8, 0);
  ASSERT_TRUE(mine.ok());
  close(*mine);
}

TEST_F(TerminalApiTest, ADaemonThatRunsNoSessionsRefusesThemAtSubmit) {
  Serve(nullptr);
  net::Endpoint socket;
  socket.unix_path = socket_;
  const std::string session = R"({"command": ["bash"], "working_dir": "/tmp", "pty": true})";
  auto refused = net::HttpCall(socket, "POST", "/v1/jobs", session, "");
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->first, 400);
  EXPECT_THAT(refused->second, HasSubstr("runs no interactive sessions"));
  auto attach = CallForDescriptor(socket_, "POST", "/v1/jobs/1/terminal");
  ASSERT_TRUE(attach.ok());
  EXPECT_EQ(attach->status, 404);
}

TEST_F(TerminalApiTest, ASessionIsSubmittedWhereSessionsRun) {
  Serve(std::make_shared<core::TerminalHandoff>());
  net::Endpoint socket;
  socket.unix_path = socket_;
  auto submitted =
      net::HttpCall(socket, "POST", "/v1/jobs",
                    R"({"command": ["bash"], "working_dir": "/tmp", "pty": true})", "");
  ASSERT_TRUE(submitted.ok());
  EXPECT_EQ(submitted->first, 201) << submitted->second;
  EXPECT_EQ(json::parse(submitted->second)["spec"]["pty"], true);
  // One job on one node: a session cannot be an array.
  auto array = net::HttpCall(
      socket, "POST", "/v1/jobs",
      R"({"command": ["bash"], "working_dir": "/tmp", "pty": true, "array": "0-3"})", "");
  ASSERT_TRUE(array.ok());
  EXPECT_EQ(array->first, 400);
  EXPECT_THAT(array->second, HasSubstr("one job on one node"));
}

}  // namespace
}  // namespace gleaner::server
