// The whole API as clients meet it: the Unix socket names the caller, TCP
// needs a token, tokens are minted only on the socket and stop working
// when revoked, and concurrent submits share commits without losing one.
#include "server/api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "core/sha256.h"
#include "net/http_client.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace gleaner::server {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(store::SqliteStore::Open((dir_.path() / "g.db").string())).value();
    ApiOptions options;
    options.log_dir = dir_.path().string();
    options.user_name = [](uint32_t uid) { return uid == 0 ? "root" : "u" + std::to_string(uid); };
    options.uid_of = [](const std::string& name) -> std::optional<uint32_t> {
      if (name == "bob") return 4243;
      return std::nullopt;
    };
    options.gpus = [] { return json{{"schema", "gleaner.gpus/v1"}, {"gpus", json::array()}}; };
    // CI runs these as root, whose tokens must be allowed explicitly
    // (RootTokensNeverSubmitUnlessAllowed).
    options.tokens.allow_root = true;
    options.queue_changed = [this] { ++queue_changed_; };
    api_ = std::make_unique<Api>(*store_, clock_, options);
    const auto handler = [this](const HttpRequest& r, const Peer& p) { return api_->Handle(r, p); };
    socket_.unix_path = (dir_.path() / "g.sock").string();
    unix_ = std::move(HttpServer::ServeUnix(socket_.unix_path, handler)).value();
    tcp_server_ = std::move(HttpServer::ServeTcp("127.0.0.1", 0, handler)).value();
    tcp_ = std::move(net::ParseServerUrl(tcp_server_->address())).value();
  }
  std::pair<int, json> Call(const net::Endpoint& e, const std::string& method,
                            const std::string& path, const std::string& body = "",
                            const std::string& token = "") {
    auto r = net::HttpCall(e, method, path, body, token);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return {r->first, json::parse(r->second, nullptr, false)};
  }

  testing::TempDir dir_;
  core::ManualClock clock_{core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000)};
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<Api> api_;
  net::Endpoint socket_;
  net::Endpoint tcp_;
  std::unique_ptr<HttpServer> unix_;
  std::unique_ptr<HttpServer> tcp_server_;
  std::atomic<int> queue_changed_{0};
};

// A daemon that schedules hears of each durable change to the queue, and
// of nothing that failed.
TEST_F(ApiTest, SubmitsAndMovesTellTheSchedulerAtOnce) {
  const std::string spec = R"({"command": ["true"], "working_dir": "/tmp"})";
  auto [submitted, job] = Call(socket_, "POST", "/v1/jobs", spec);
  ASSERT_EQ(submitted, 201) << job.dump();
  EXPECT_EQ(queue_changed_, 1);
  EXPECT_EQ(Call(socket_, "POST", "/v1/jobs", R"({"command": []})").first, 400);
  EXPECT_EQ(queue_changed_, 1);
  const std::string path = "/v1/jobs/" + std::to_string(job["id"].get<int64_t>());
  EXPECT_EQ(Call(socket_, "POST", path + "/hold").first, 200);
  EXPECT_EQ(Call(socket_, "POST", path + "/hold").first, 409);  // held already
  EXPECT_EQ(Call(socket_, "POST", path + "/release").first, 200);
  EXPECT_EQ(queue_changed_, 3);
}

TEST_F(ApiTest, TcpNeedsATokenMintedOnTheSocket) {
  EXPECT_THAT(tcp_server_->address(), HasSubstr("http://127.0.0.1:"));
  auto [anonymous, why] = Call(tcp_, "GET", "/v1/jobs");
  EXPECT_EQ(anonymous, 401);
  EXPECT_EQ(why["error"]["code"], "UNAUTHENTICATED");
  EXPECT_THAT(why["error"]["message"].get<std::string>(), HasSubstr("gleaner token create"));
  EXPECT_EQ(Call(tcp_, "GET", "/v1/jobs", "", "glt_0000").first, 401);
  EXPECT_EQ(Call(tcp_, "GET", "/v1/jobs", "", "password").first, 401);

  // On the socket the kernel names us; a token is minted for us.
  auto [created, token] = Call(socket_, "POST", "/v1/tokens", R"({"name": "laptop"})");
  ASSERT_EQ(created, 201) << token.dump();
  const std::string secret = token["token"];
  EXPECT_EQ(secret.size(), 68u);  // glt_ and 64 hex digits
  EXPECT_EQ(token["uid"], geteuid());
  EXPECT_EQ(token["name"], "laptop");

  auto [who_status, who] = Call(tcp_, "GET", "/v1/whoami", "", secret);
  EXPECT_EQ(who_status, 200);
  EXPECT_EQ(who["uid"], geteuid());
  EXPECT_EQ(who["by"], "token");
  auto [submitted, job] = Call(tcp_, "POST", "/v1/jobs", R"({"command": ["true"]})", secret);
  EXPECT_EQ(submitted, 201);
  EXPECT_EQ(job["uid"], geteuid());  // the token's owner, whatever the client says
  EXPECT_EQ(Call(tcp_, "GET", "/v1/gpus", "", secret).second["schema"], "gleaner.gpus/v1");

  // A token cannot mint more tokens (they would outlive its revocation).
  auto [minted, refusal] = Call(tcp_, "POST", "/v1/tokens", "{}", secret);
  EXPECT_EQ(minted, 403);
  EXPECT_THAT(refusal["error"]["message"].get<std::string>(), HasSubstr("on the server host"));

  // Only the digest is kept.
  auto listed = Call(tcp_, "GET", "/v1/tokens", "", secret).second["tokens"];
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_FALSE(listed[0].contains("token"));
  EXPECT_TRUE(store_->FindToken(core::Sha256Hex(secret)).ok());

  auto [revoked, gone] = Call(tcp_, "POST", "/v1/tokens/1/revoke", "", secret);
  EXPECT_EQ(revoked, 200);
  EXPECT_FALSE(gone["revoked_at"].is_null());
  EXPECT_EQ(Call(tcp_, "GET", "/v1/jobs", "", secret).first, 401);
}

// A token does what its scopes allow, for the projects it names: a
// dashboard's token reads, a CI's submits to one project, and even root's
// token is no admin without the admin scope.
TEST_F(ApiTest, ATokenDoesOnlyWhatItsScopesAndProjectsAllow) {
  auto [made, reader] = Call(socket_, "POST", "/v1/tokens", R"({"scopes": ["read"]})");
  ASSERT_EQ(made, 201) << reader.dump();
  EXPECT_EQ(reader["scopes"], json::array({"read"}));
  const std::string read_only = reader["token"];
  EXPECT_EQ(Call(tcp_, "GET", "/v1/jobs", "", read_only).first, 200);
  auto [submitted, refusal] = Call(tcp_, "POST", "/v1/jobs", R"({"command": ["true"]})", read_only);
  EXPECT_EQ(submitted, 403);
  EXPECT_THAT(refusal["error"]["message"].get<std::string>(),
              HasSubstr("needs the \"submit\" scope, and its scopes are read "
                        "(gleaner token create --scope submit)"));

  auto [made_ci, ci] =
      Call(socket_, "POST", "/v1/tokens",
           R"({"name": "ci", "scopes": ["read", "submit"], "projects": ["vision"]})");
  ASSERT_EQ(made_ci, 201) << ci.dump();
  EXPECT_EQ(ci["projects"], json::array({"vision"}));
  const std::string ci_token = ci["token"];
  auto [elsewhere, why] =
      Call(tcp_, "POST", "/v1/jobs", R"({"command": ["true"], "project": "nlp"})", ci_token);
  EXPECT_EQ(elsewhere, 403);
  EXPECT_THAT(why["error"]["message"].get<std::string>(),
              HasSubstr("this token acts only for project(s) vision, not for project nlp"));
  EXPECT_EQ(
      Call(tcp_, "POST", "/v1/jobs", R"({"command": ["true"], "project": "vision"})", ci_token)
          .first,
      201);
  EXPECT_EQ(Call(tcp_, "POST", "/v1/jobs/1/approve", "", ci_token).first, 403);
  EXPECT_EQ(Call(tcp_, "POST", "/v1/tokens/1/revoke", "", ci_token).first, 403);

  // Whoever owns it, a token without the admin scope acts for its owner only.
  sched::JobSpec spec;
  spec.command = {"true"};
  spec.project = "vision";
  const sched::JobId theirs = store_->Submit("u1000", 1000, spec, clock_.Now())->id;
  EXPECT_EQ(
      Call(tcp_, "POST", "/v1/jobs/" + std::to_string(theirs) + "/cancel", "", ci_token).first,
      403);

  EXPECT_EQ(Call(socket_, "POST", "/v1/tokens", R"({"scopes": ["everything"]})").first, 400);
  EXPECT_EQ(Call(socket_, "POST", "/v1/tokens", R"({"scopes": []})").first, 400);
  // Each token's creation, with what it may do, is in the history.
  store::EventQuery q;
  q.kind = "token_created";
  auto events = store_->Events(q);
  ASSERT_EQ(events->size(), 2u);
  EXPECT_THAT(events->at(1).detail, HasSubstr("\"ci\" (read,submit; projects vision)"));
}

TEST_F(ApiTest, OnlyRootMintsTokensForOthersAndRevokesTheirs) {
  // Tokens for users other than the caller go through the store directly,
  // as the socket would let only root do.
  const HttpRequest for_bob{"POST", "/v1/tokens", {}, R"({"user": "bob", "name": "ci"})"};
  EXPECT_EQ(api_->Handle(for_bob, Peer{1000}).status, 403);
  HttpResponse made = api_->Handle(for_bob, Peer{0});
  ASSERT_EQ(made.status, 201) << made.body;
  const json bob = json::parse(made.body);
  EXPECT_EQ(bob["user"], "bob");
  EXPECT_EQ(bob["uid"], 4243);
  const HttpRequest for_nobody{"POST", "/v1/tokens", {}, R"({"user": "nobody-here"})"};
  EXPECT_EQ(api_->Handle(for_nobody, Peer{0}).status, 400);
  const HttpRequest typo{"POST", "/v1/tokens", {}, R"({"nmae": "x"})"};
  EXPECT_EQ(api_->Handle(typo, Peer{0}).status, 400);

  const HttpRequest revoke{"POST", "/v1/tokens/1/revoke", {}, ""};
  EXPECT_EQ(api_->Handle(revoke, Peer{1000}).status, 403);  // not theirs
  const HttpRequest list{"GET", "/v1/tokens", {}, ""};
  EXPECT_EQ(json::parse(api_->Handle(list, Peer{1000}).body)["tokens"].size(), 0u);
  EXPECT_EQ(json::parse(api_->Handle(list, Peer{0}).body)["tokens"].size(), 1u);
  EXPECT_EQ(api_->Handle(revoke, Peer{0}).status, 200);
  EXPECT_EQ(api_->Handle(revoke, Peer{0}).status, 404);  // already revoked
}

TEST_F(ApiTest, ConcurrentSubmitsAreEachSavedOnce) {
  std::mutex mu;
  std::vector<int64_t> ids;
  std::vector<std::thread> clients;
  for (int c = 0; c < 12; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto r = net::HttpCall(socket_, "POST", "/v1/jobs", R"({"command": ["true"]})");
        if (!r.ok() || r->first != 201) continue;
        std::lock_guard lock(mu);
        ids.push_back(json::parse(r->second)["id"].get<int64_t>());
      }
    });
  }
  for (std::thread& t : clients) t.join();
  ASSERT_EQ(ids.size(), 600u);
  EXPECT_EQ(std::set<int64_t>(ids.begin(), ids.end()).size(), 600u);
  EXPECT_EQ(store_->List({})->size(), 600u);
}

TEST_F(ApiTest, AnArrayIsOneTaskPerIndex) {
  auto [status, first] =
      Call(socket_, "POST", "/v1/jobs", R"({"command": ["true"], "array": "10-20:5%2"})");
  ASSERT_EQ(status, 201) << first.dump();
  EXPECT_EQ(first["array_tasks"], 3);
  auto jobs = store_->List({});
  ASSERT_EQ(jobs->size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*jobs)[i].array_id, (*jobs)[0].id);
    EXPECT_EQ((*jobs)[i].array_index, static_cast<int64_t>(10 + 5 * i));
  }
  // A task that already ended stays as it was; the rest are cancelled.
  store::JobUpdate done;
  ASSERT_TRUE(
      store_->Transition(1, store::JobState::kQueued, store::JobState::kCancelled, done).ok());
  auto [cancelled_status, cancelled] = Call(socket_, "POST", "/v1/jobs/2/cancel?array=1");
  EXPECT_EQ(cancelled_status, 200) << cancelled.dump();
  EXPECT_EQ(cancelled["array_id"], 1);
  EXPECT_EQ(cancelled["cancelled"], json::array({2, 3}));
  auto [single, not_array] = Call(socket_, "POST", "/v1/jobs", R"({"command": ["true"]})");
  ASSERT_EQ(single, 201);
  auto [refused, why] = Call(socket_, "POST", "/v1/jobs/4/cancel?array=1");
  EXPECT_EQ(refused, 400);
  EXPECT_THAT(why["error"]["message"].get<std::string>(), HasSubstr("not a task of an array"));
}

TEST_F(ApiTest, OthersSeeAJobButNotItsEnvironment) {
  sched::JobSpec spec;
  spec.command = {"train"};
  spec.env = {{"WANDB_API_KEY", "secret"}};
  ASSERT_TRUE(store_->Submit("someone", 4242, spec, clock_.Now()).ok());
  const HttpRequest list{"GET", "/v1/jobs", {}, ""};
  const json seen = json::parse(api_->Handle(list, Peer{1000}).body)["jobs"][0];
  EXPECT_EQ(seen["user"], "someone");
  EXPECT_FALSE(seen["spec"].contains("env"));
  const HttpRequest show{"GET", "/v1/jobs/1", {}, ""};
  EXPECT_FALSE(json::parse(api_->Handle(show, Peer{1000}).body)["spec"].contains("env"));
  EXPECT_EQ(json::parse(api_->Handle(show, Peer{4242}).body)["spec"]["env"]["WANDB_API_KEY"],
            "secret");
  EXPECT_EQ(json::parse(api_->Handle(show, Peer{0}).body)["spec"]["env"]["WANDB_API_KEY"],
            "secret");
}

TEST_F(ApiTest, AHugeArrayOfAHugeSpecIsRefused) {
  const std::string padding(4000, 'x');
  auto [status, error] = Call(socket_, "POST", "/v1/jobs",
                              R"({"command": ["true", ")" + padding + R"("], "array": "0-99999"})");
  EXPECT_EQ(status, 400);
  EXPECT_THAT(error["error"]["message"].get<std::string>(), HasSubstr("at most 256 MiB"));
  EXPECT_TRUE(store_->List({})->empty());
}

// Root's tokens read, approve and administer, but none may start a job as
// root over TCP unless the site allows it.
TEST_F(ApiTest, RootTokensNeverSubmitUnlessAllowed) {
  ApiOptions options;
  options.uid_of = [](const std::string&) -> std::optional<uint32_t> { return 0; };
  options.user_name = [](uint32_t uid) { return uid == 0 ? "root" : "u" + std::to_string(uid); };
  Api strict(*store_, clock_, options);
  const HttpRequest mint{"POST", "/v1/tokens", {}, R"({"name": "laptop"})"};
  const HttpResponse made = strict.Handle(mint, Peer{0});
  ASSERT_EQ(made.status, 201) << made.body;
  EXPECT_EQ(json::parse(made.body)["scopes"], json({"read", "approve", "admin"}));
  const std::string bearer = "Bearer " + json::parse(made.body)["token"].get<std::string>();
  EXPECT_EQ(strict.Handle({"GET", "/v1/whoami", {{"authorization", bearer}}, ""}, Peer{}).status,
            200);
  const HttpResponse submit = strict.Handle(
      {"POST", "/v1/jobs", {{"authorization", bearer}}, R"({"command": ["true"]})"}, Peer{});
  EXPECT_EQ(submit.status, 403);
  EXPECT_THAT(json::parse(submit.body)["error"]["message"].get<std::string>(),
              HasSubstr("root's tokens never submit"));
  EXPECT_TRUE(store_->List({})->empty());
  const HttpResponse refused = strict.Handle(
      {"POST", "/v1/tokens", {}, R"({"name": "ci", "scopes": ["read", "submit"]})"}, Peer{0});
  EXPECT_EQ(refused.status, 403);
  EXPECT_THAT(refused.body, HasSubstr("allow_root_tokens"));
  // One made where root tokens were allowed stops working here.
  auto [created, token] = Call(socket_, "POST", "/v1/tokens", R"({"name": "old"})");
  if (geteuid() == 0) {
    const HttpRequest whoami{"GET",
                             "/v1/whoami",
                             {{"authorization", "Bearer " + token["token"].get<std::string>()}},
                             ""};
    EXPECT_EQ(strict.Handle(whoami, Peer{}).status, 401);
  }
  // And every token expires.
  const HttpResponse for_user = strict.Handle(mint, Peer{1000});
  EXPECT_EQ(for_user.status, 201);
  EXPECT_FALSE(json::parse(for_user.body)["expires_at"].is_null());
}

// `gleaner keep` and `gleaner unpark` reach the host's parker with who
// asks; a daemon that parks nothing says so.
TEST_F(ApiTest, KeepAndUnparkReachTheParkerAsTheCaller) {
  const HttpRequest keep{"POST", "/v1/gpus/0/keep", {}, ""};
  const HttpResponse none = api_->Handle(keep, Peer{1000});
  EXPECT_EQ(none.status, 503);
  EXPECT_THAT(none.body, HasSubstr("parks no holders"));

  ApiOptions options;
  options.user_name = [](uint32_t uid) { return uid == 0 ? "root" : "u" + std::to_string(uid); };
  std::vector<std::string> asked;
  options.parking = [&](const std::string& gpu, observe::HolderAsk ask, const Caller& caller) {
    asked.push_back(gpu + " " + std::string(observe::HolderAskName(ask)) + " by " + caller.user +
                    (caller.admin() ? " (admin)" : ""));
    return gpu == "9" ? core::NotFound("no GPU 9 on this host") : core::Status::Ok();
  };
  Api parking(*store_, clock_, options);
  const HttpResponse kept = parking.Handle(keep, Peer{1000});
  EXPECT_EQ(kept.status, 200);
  EXPECT_THAT(kept.body, HasSubstr("not parked until it computes again"));
  EXPECT_EQ(parking.Handle({"POST", "/v1/gpus/GPU-abc/unpark", {}, ""}, Peer{0}).status, 200);
  EXPECT_EQ(parking.Handle({"GET", "/v1/gpus/0/keep", {}, ""}, Peer{1000}).status, 405);
  EXPECT_EQ(parking.Handle({"POST", "/v1/gpus/9/keep", {}, ""}, Peer{1000}).status, 404);
  EXPECT_EQ(parking.Handle({"POST", "/v1/gpus/0/evict", {}, ""}, Peer{0}).status, 404);
  const HttpResponse given_up = parking.Handle({"POST", "/v1/gpus/0/give-up", {}, ""}, Peer{0});
  EXPECT_EQ(given_up.status, 200);
  EXPECT_THAT(given_up.body, HasSubstr("left frozen for its user to end"));
  EXPECT_THAT(parking.Handle({"POST", "/v1/gpus/0/kill", {}, ""}, Peer{0}).body,
              HasSubstr("given up on and ended at the next pass"));
  EXPECT_EQ(asked, (std::vector<std::string>{"0 keep by u1000", "GPU-abc unpark by root (admin)",
                                             "9 keep by u1000", "0 give-up by root (admin)",
                                             "0 kill by root (admin)"}));
}

TEST(ServerUrlTest, ParsesWhatUsersTypeAndSaysWhatIsWrong) {
  auto e = net::ParseServerUrl("http://127.0.0.1:7380/");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "127.0.0.1");
  EXPECT_EQ(e->port, 7380);
  EXPECT_EQ(net::ParseServerUrl("http://[::1]:80")->host, "::1");
  EXPECT_EQ(net::ParseServerUrl("unix:/run/g.sock")->unix_path, "/run/g.sock");
  EXPECT_TRUE(net::ParseServerUrl("https://10.0.0.7:7380")->tls);
  EXPECT_FALSE(net::ParseServerUrl("http://10.0.0.7:7380")->tls);
  EXPECT_EQ(net::ParseServerUrl("https://10.0.0.7:7380")->ToString(), "https://10.0.0.7:7380");
  EXPECT_THAT(net::ParseServerUrl("ftp://x:1").status().message(), HasSubstr("https://HOST:PORT"));
  EXPECT_THAT(net::ParseServerUrl("127.0.0.1:7380").status().message(),
              HasSubstr("http://HOST:PORT"));
  EXPECT_THAT(net::ParseServerUrl("http://host").status().message(), HasSubstr("not HOST:PORT"));
  EXPECT_THAT(net::ParseServerUrl("http://h:99999").status().message(), HasSubstr("not HOST:PORT"));
  EXPECT_FALSE(HttpServer::ServeTcp("example.com", 0, nullptr).ok());
}

}  // namespace
}  // namespace gleaner::server
