// [ui] anonymous_read: over TCP, a request without a token may read what
// the dashboard shows and nothing else; a wrong token is still refused;
// writes always need a token; and the setting is off unless asked for.
#include "server/anonymous_read.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "server/api.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace gleaner::server {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class AnonymousReadTest : public ::testing::Test {
 protected:
  void Serve(bool anonymous_read, bool hide_others_commands = false) {
    store_ = std::move(store::SqliteStore::Open((dir_.path() / "g.db").string())).value();
    sched::JobSpec spec;
    spec.command = {"train"};
    spec.env = {{"WANDB_API_KEY", "secret"}};
    ASSERT_TRUE(store_->Submit("alice", 4242, spec, clock_.Now()).ok());
    ApiOptions options;
    options.log_dir = dir_.path().string();
    options.user_name = [](uint32_t uid) { return "u" + std::to_string(uid); };
    options.uid_of = [](const std::string&) { return std::nullopt; };
    options.gpus = [] {
      return json{{"schema", "gleaner.gpus/v1"},
                  {"gpus",
                   {{{"index", 0},
                     {"processes",
                      {{{"pid", 7},
                        {"user", "alice"},
                        {"command", "/opt/conda/bin/python train.py --db-password hunter2"}}}}}}}};
    };
    options.metrics = [](const std::map<std::string, int64_t>&, bool) { return std::string(); };
    options.observations = store_.get();
    options.anonymous_read = anonymous_read;
    options.hide_others_commands = hide_others_commands;
    api_ = std::make_unique<Api>(*store_, clock_, options);
    server_ =
        std::move(HttpServer::ServeTcp("127.0.0.1", 0, [this](const HttpRequest& r, const Peer& p) {
          return api_->Handle(r, p);
        })).value();
    tcp_ = std::move(net::ParseServerUrl(server_->address())).value();
  }

  std::pair<int, json> Call(const std::string& method, const std::string& path,
                            const std::string& token = "") {
    auto r = net::HttpCall(tcp_, method, path, method == "POST" ? "{}" : "", token);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return {r->first, json::parse(r->second, nullptr, false)};
  }

  testing::TempDir dir_;
  core::ManualClock clock_{core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000)};
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<HttpServer> server_;
  net::Endpoint tcp_;
};

// Before: every GPU process's whole command line went to anyone who could
// read the dashboard, a password in it included.
TEST_F(AnonymousReadTest, OthersCommandLinesShowOnlyTheirProgram) {
  Serve(true, true);
  auto [status, gpus] = Call("GET", "/v1/gpus");
  ASSERT_EQ(status, 200);
  EXPECT_EQ(gpus["gpus"][0]["processes"][0]["command"], "python") << gpus.dump();
  EXPECT_EQ(gpus["gpus"][0]["processes"][0]["user"], "alice");
  EXPECT_EQ(gpus["commands_hidden"], true);
}

TEST_F(AnonymousReadTest, ReadsWhatTheDashboardShowsAndNothingElse) {
  Serve(true);
  for (const char* path :
       {"/v1/gpus", "/v1/jobs", "/v1/jobs?all=1", "/v1/jobs/1", "/v1/history?minutes=60",
        "/v1/profiles?kind=project", "/v1/cost/report?since=1d", "/v1/whoami"}) {
    EXPECT_EQ(Call("GET", path).first, 200) << path;
  }
  auto [listed, jobs] = Call("GET", "/v1/jobs");
  ASSERT_EQ(jobs["jobs"].size(), 1u);
  EXPECT_EQ(jobs["jobs"][0]["user"], "alice");
  EXPECT_FALSE(jobs["jobs"][0]["spec"].contains("env")) << jobs.dump();
  EXPECT_FALSE(Call("GET", "/v1/jobs/1").second["spec"].contains("env"));
  auto [who_status, who] = Call("GET", "/v1/whoami");
  EXPECT_EQ(who["by"], "anonymous");
  EXPECT_EQ(who["admin"], false);
  EXPECT_TRUE(who["user"].is_null());

  // Logs, tokens, the advisor, metrics and every write still need a token.
  for (const auto& [method, path] :
       std::vector<std::pair<std::string, std::string>>{{"GET", "/v1/jobs/1/logs"},
                                                        {"GET", "/v1/tokens"},
                                                        {"GET", "/v1/cost/advise?gpu=H100&hours=1"},
                                                        {"GET", "/metrics"},
                                                        {"POST", "/v1/jobs"},
                                                        {"POST", "/v1/jobs/1/cancel"},
                                                        {"POST", "/v1/jobs/1/hold"},
                                                        {"POST", "/v1/jobs/1/release"},
                                                        {"POST", "/v1/tokens"},
                                                        {"POST", "/v1/tokens/1/revoke"}}) {
    auto [status, why] = Call(method, path);
    EXPECT_EQ(status, 401) << method << " " << path;
    EXPECT_THAT(why["error"]["message"].get<std::string>(), HasSubstr("needs a token"));
  }
  EXPECT_EQ(store_->Get(1)->state, store::JobState::kQueued);
  // A token that does not work is refused, not read past: the dashboard
  // then asks for a new one.
  EXPECT_EQ(Call("GET", "/v1/gpus", "glt_" + std::string(64, '0')).first, 401);
}

TEST_F(AnonymousReadTest, IsOffUnlessAskedFor) {
  Serve(false);
  for (const char* path :
       {"/v1/gpus", "/v1/jobs", "/v1/history", "/v1/cost/report", "/v1/whoami"}) {
    EXPECT_EQ(Call("GET", path).first, 401) << path;
  }
}

TEST(AnonymousMayReadTest, OnlyGetsOfTheDashboardsRoutes) {
  const auto may = [](const std::string& method, const std::string& path) {
    return AnonymousMayRead({method, path, {}, ""});
  };
  EXPECT_TRUE(may("GET", "/v1/gpus"));
  EXPECT_TRUE(may("GET", "/v1/jobs/12"));
  EXPECT_TRUE(may("GET", "/v1/cost/report?since=2027-01-01"));
  EXPECT_FALSE(may("POST", "/v1/gpus"));
  EXPECT_FALSE(may("GET", "/v1/jobs/12/logs"));
  EXPECT_FALSE(may("GET", "/v1/jobs/x"));
  EXPECT_FALSE(may("GET", "/v1/cost/advise"));
  EXPECT_FALSE(may("GET", "/v1/tokens"));
  EXPECT_FALSE(may("GET", "/metrics"));
  EXPECT_FALSE(may("GET", "/v2/gpus"));
}

}  // namespace
}  // namespace gleaner::server
