// The job API over a real Unix socket: identity from the kernel, every bad
// request a 4xx with a message, nothing lost.
#include "server/job_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/mutex.h"
#include "net/http_client.h"
#include "server/http_server.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace gleaner::server {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class JobApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(store::SqliteStore::Open(":memory:")).value();
    UseLimits(SubmitLimits{});
    socket_.unix_path = (dir_.path() / "g.sock").string();
    server_ = std::move(HttpServer::ServeUnix(socket_.unix_path, [this](const HttpRequest& r,
                                                                        const Peer& peer) {
                const uint32_t uid = peer.uid.value();
                seen_uid_ = uid;
                return api_->Handle(r, {uid, uid == 0 ? "root" : "u" + std::to_string(uid)});
              })).value();
  }
  // The API anew with `limits` (the server calls whichever is current).
  void UseLimits(const SubmitLimits& limits) {
    api_ = std::make_unique<JobApi>(*store_, store_mu_, clock_, sched::JobLimits{}, limits,
                                    dir_.path().string());
  }
  std::pair<int, json> Call(const std::string& method, const std::string& target,
                            const std::string& body = "") {
    auto r = net::HttpCall(socket_, method, target, body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return {r->first, json::parse(r->second, nullptr, false)};
  }

  testing::TempDir dir_;
  core::ManualClock clock_{core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000)};
  std::unique_ptr<store::SqliteStore> store_;
  core::Mutex store_mu_;
  std::unique_ptr<JobApi> api_;
  net::Endpoint socket_;
  std::unique_ptr<HttpServer> server_;
  uint32_t seen_uid_ = 12345;
};

TEST_F(JobApiTest, SubmitListShowCancelAsTheKernelSays) {
  auto [status, job] = Call("POST", "/v1/jobs", R"({"command": ["sleep", "30"], "gpus": 2})");
  EXPECT_EQ(status, 201);
  EXPECT_EQ(seen_uid_, geteuid());  // SO_PEERCRED, not anything the client said
  EXPECT_EQ(job["id"], 1);
  EXPECT_EQ(job["uid"], geteuid());
  EXPECT_EQ(job["state"], "queued");
  auto [list_status, list] = Call("GET", "/v1/jobs");
  EXPECT_EQ(list_status, 200);
  EXPECT_EQ(list["jobs"].size(), 1u);
  EXPECT_EQ(Call("GET", "/v1/jobs/1").second["spec"]["gpus"], 2);
  auto [cancel_status, cancelled] = Call("POST", "/v1/jobs/1/cancel");
  EXPECT_EQ(cancel_status, 200);
  EXPECT_EQ(cancelled["state"], "cancelled");
  EXPECT_EQ(Call("GET", "/v1/jobs").second["jobs"].size(), 0u);
  EXPECT_EQ(Call("GET", "/v1/jobs?all=1").second["jobs"].size(), 1u);
  auto [again, conflict] = Call("POST", "/v1/jobs/1/cancel");
  EXPECT_EQ(again, 409);
  EXPECT_THAT(conflict["error"]["message"].get<std::string>(),
              HasSubstr("cannot go from cancelled"));
}

TEST_F(JobApiTest, BadRequestsGetClearErrors) {
  const std::pair<std::string, const char*> bad[] = {
      {"{not json", "the body is not JSON"},
      {R"({"command": ["x"], "gpu": 1})", "gpu: unknown field"},
      {R"({"command": ["x"], "gpus": "two"})", "gpus: a whole number"},
      {R"({"command": ["x"], "gpus": -1})", "gpus: at least 1"},
      {R"({"command": ["x"], "gpus": 64})", "no host here has more than 8"},
      {R"({"gpus": 1})", "command: required"},
      {R"({"command": ["x"], "array": "9-0"})", "array: the last index"},
      {R"({"command": ["x"], "array": "0-200000"})", "at most 100000 per array"},
  };
  for (const auto& [body, expected] : bad) {
    auto [status, error] = Call("POST", "/v1/jobs", body);
    EXPECT_EQ(status, 400) << body;
    EXPECT_THAT(error["error"]["message"].get<std::string>(), HasSubstr(expected)) << body;
    EXPECT_EQ(error["error"]["code"], "INVALID_ARGUMENT");
  }
  EXPECT_EQ(Call("GET", "/v1/jobs/99").first, 404);
  EXPECT_EQ(Call("GET", "/v1/jobs/abc").first, 400);
  EXPECT_EQ(Call("GET", "/v2/things").first, 404);
  EXPECT_EQ(Call("DELETE", "/v1/jobs").first, 405);
  EXPECT_EQ(Call("POST", "/v1/jobs", std::string(2 * 1024 * 1024, ' ')).first, 413);
  EXPECT_TRUE(store_->List({})->empty());  // none of that queued anything
}

TEST_F(JobApiTest, OthersJobsAreNotYoursToCancel) {
  sched::JobSpec spec;
  spec.command = {"x"};
  ASSERT_TRUE(store_->Submit("someone", 4242, spec, clock_.Now()).ok());
  const HttpRequest cancel{"POST", "/v1/jobs/1/cancel", {}, ""};
  HttpResponse denied = api_->Handle(cancel, {1000, "alice"});
  EXPECT_EQ(denied.status, 403);
  EXPECT_THAT(denied.body, HasSubstr("belongs to someone; only they (or root) may cancel it"));
  EXPECT_EQ(api_->Handle(cancel, {0, "root"}).status, 200);
}

TEST(HttpServerTest, AStaleSocketIsReplacedAndALongPathRefused) {
  testing::TempDir dir;
  net::Endpoint socket;
  socket.unix_path = (dir.path() / "s.sock").string();
  {
    // A socket file left by a server that was killed.
    auto stale = HttpServer::ServeUnix(
        socket.unix_path, [](const HttpRequest&, const Peer&) { return HttpResponse{}; });
    ASSERT_TRUE(stale.ok());
    std::filesystem::rename(socket.unix_path, socket.unix_path + ".kept");
  }
  std::filesystem::rename(socket.unix_path + ".kept", socket.unix_path);
  auto server = HttpServer::ServeUnix(socket.unix_path, [](const HttpRequest&, const Peer&) {
    return HttpResponse{200, "{}"};
  });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  EXPECT_EQ(net::HttpCall(socket, "GET", "/", "")->first, 200);
  EXPECT_THAT(HttpServer::ServeUnix(std::string(200, 'x'), nullptr).status().message(),
              HasSubstr("socket path too long"));
  server->reset();
  EXPECT_FALSE(std::filesystem::exists(socket.unix_path));  // removed on stop
  EXPECT_THAT(net::HttpCall(socket, "GET", "/", "").status().message(),
              HasSubstr("is `gleaner up` running?"));
}

}  // namespace
}  // namespace gleaner::server

namespace gleaner::server {
namespace {

TEST_F(JobApiTest, HoldReleaseAndLogs) {
  ASSERT_EQ(Call("POST", "/v1/jobs", R"({"command": ["x"]})").first, 201);
  auto [held_status, held] = Call("POST", "/v1/jobs/1/hold");
  EXPECT_EQ(held_status, 200);
  EXPECT_EQ(held["state"], "held");
  EXPECT_EQ(held["reason"],
            "held by " + std::string(geteuid() == 0 ? "root" : "u" + std::to_string(geteuid())));
  EXPECT_EQ(Call("POST", "/v1/jobs/1/hold").first, 409);  // already held
  EXPECT_EQ(Call("POST", "/v1/jobs/1/release").second["state"], "queued");
  EXPECT_EQ(Call("GET", "/v1/jobs/1/hold").first, 405);

  dir_.Write("1.out", "hello\nworld\n");
  auto [status, logs] = Call("GET", "/v1/jobs/1/logs?stream=out&offset=0");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(logs["data"], "hello\nworld\n");
  EXPECT_EQ(logs["offset"], 12);
  EXPECT_EQ(logs["state"], "queued");
  EXPECT_EQ(Call("GET", "/v1/jobs/1/logs?stream=out&offset=6").second["data"], "world\n");
  EXPECT_EQ(Call("GET", "/v1/jobs/1/logs?stream=err").second["data"], "");  // none yet

  sched::JobSpec spec;
  spec.command = {"x"};
  ASSERT_TRUE(store_->Submit("someone", 4242, spec, clock_.Now()).ok());
  const HttpRequest logs_of_other{"GET", "/v1/jobs/2/logs", {}, ""};
  if (geteuid() != 4242 && geteuid() != 0) {
    EXPECT_EQ(api_->Handle(logs_of_other, {geteuid(), "me"}).status, 403);
  }
  EXPECT_EQ(api_->Handle(logs_of_other, {1000, "alice"}).status, 403);
}

TEST_F(JobApiTest, ALogThatIsALinkIsNeverFollowed) {
  // Someone who could write the log directory plants 1.out as a link to a
  // file only root may read: the daemon, reading as root, must not serve it.
  ASSERT_EQ(Call("POST", "/v1/jobs", R"({"command": ["x"]})").first, 201);
  const std::string secret = dir_.Write("secret", "root only\n");
  chmod(secret.c_str(), 0600);
  ASSERT_EQ(symlink(secret.c_str(), (dir_.path() / "1.out").c_str()), 0);
  auto [status, answer] = Call("GET", "/v1/jobs/1/logs?stream=out");
  EXPECT_EQ(status, 409);
  EXPECT_EQ(answer.dump().find("root only"), std::string::npos);
  // Ids are digits only: "+1", "01" and past int64 name no job.
  for (const char* id : {"+1", "01", "99999999999999999999", "-1"}) {
    EXPECT_EQ(Call("GET", std::string("/v1/jobs/") + id).first, 400) << id;
  }
}

}  // namespace
}  // namespace gleaner::server

namespace gleaner::server {
namespace {

TEST_F(JobApiTest, ListsOnePageAtATimeFilteredByStateAndUser) {
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(Call("POST", "/v1/jobs", R"({"command": ["x"]})").first, 201);
  ASSERT_EQ(Call("POST", "/v1/jobs/2/cancel").first, 200);
  const auto ids = [](const json& page) {
    std::vector<int64_t> out;
    for (const json& job : page["jobs"]) out.push_back(job["id"].get<int64_t>());
    return out;
  };
  auto [status, first] = Call("GET", "/v1/jobs?limit=2");
  EXPECT_EQ(status, 200);
  EXPECT_THAT(ids(first), ::testing::ElementsAre(1, 3));  // 2 has ended
  ASSERT_EQ(first["next"], 3);
  auto second = Call("GET", "/v1/jobs?limit=2&after=3").second;
  EXPECT_THAT(ids(second), ::testing::ElementsAre(4, 5));
  EXPECT_FALSE(second.contains("next"));  // nothing follows
  EXPECT_THAT(ids(Call("GET", "/v1/jobs?after=5").second), ::testing::ElementsAre());
  EXPECT_THAT(ids(Call("GET", "/v1/jobs?state=cancelled,queued&after=1").second),
              ::testing::ElementsAre(2, 3, 4, 5));
  const std::string me = geteuid() == 0 ? "root" : "u" + std::to_string(geteuid());
  EXPECT_EQ(Call("GET", "/v1/jobs?all=1&user=" + me).second["jobs"].size(), 5u);
  EXPECT_EQ(Call("GET", "/v1/jobs?all=1&user=someone").second["jobs"].size(), 0u);

  for (const char* bad :
       {"limit=0", "limit=1001", "limit=-1", "limit=x", "after=0", "after=-3", "state=done",
        "state=", "all=1&state=queued", "all=yes", "user=", "page=2", "limit=1&limit=2"}) {
    auto [code, error] = Call("GET", std::string("/v1/jobs?") + bad);
    EXPECT_EQ(code, 400) << bad;
    EXPECT_TRUE(error["error"]["message"].is_string()) << bad;
  }
}

TEST_F(JobApiTest, AUserOrProjectPastItsLimitIsRefusedWithWhatToDo) {
  SubmitLimits limits;
  limits.jobs_per_user = 3;
  limits.jobs_per_project = 2;
  UseLimits(limits);
  ASSERT_EQ(Call("POST", "/v1/jobs", R"({"command": ["x"]})").first, 201);
  ASSERT_EQ(Call("POST", "/v1/jobs", R"({"command": ["x"]})").first, 201);
  auto [status, error] = Call("POST", "/v1/jobs", R"({"command": ["x"], "array": "0-1"})");
  EXPECT_EQ(status, 429);
  EXPECT_THAT(error["error"]["message"].get<std::string>(),
              HasSubstr("has 2 jobs not yet ended, and 2 more would pass the limit of 3"));
  EXPECT_THAT(error["error"]["message"].get<std::string>(), HasSubstr("[limits] jobs_per_user"));
  EXPECT_EQ(store_->List({})->size(), 2u);  // nothing of the refused array was queued
  // Ended jobs no longer count.
  ASSERT_EQ(Call("POST", "/v1/jobs/1/cancel").first, 200);
  EXPECT_EQ(Call("POST", "/v1/jobs", R"({"command": ["x"], "array": "0-1"})").first, 201);

  // A project's limit holds across its users' jobs; a job without a
  // project counts against its user alone.
  limits.jobs_per_user = 0;
  UseLimits(limits);
  const std::string vision = R"({"command": ["x"], "project": "vision"})";
  EXPECT_EQ(Call("POST", "/v1/jobs", vision).first, 201);
  EXPECT_EQ(Call("POST", "/v1/jobs", vision).first, 201);
  auto [over, why] = Call("POST", "/v1/jobs", vision);
  EXPECT_EQ(over, 429);
  EXPECT_THAT(why["error"]["message"].get<std::string>(), HasSubstr("project vision has 2 jobs"));
  EXPECT_EQ(Call("POST", "/v1/jobs", R"({"command": ["x"], "project": "nlp"})").first, 201);

  limits.spec_bytes_per_user = 1 << 20;
  UseLimits(limits);
  std::string big = R"({"command": ["x"], "env": {)";
  for (char v : {'A', 'B', 'C', 'D'}) {
    big +=
        std::string(v == 'A' ? "" : ", ") + "\"" + v + "\": \"" + std::string(100'000, 'b') + "\"";
  }
  big += "}}";
  EXPECT_EQ(Call("POST", "/v1/jobs", big).first, 201);  // 400 KB each, 1 MiB in all
  EXPECT_EQ(Call("POST", "/v1/jobs", big).first, 201);
  auto [full, bytes] = Call("POST", "/v1/jobs", big);
  EXPECT_EQ(full, 429);
  EXPECT_THAT(bytes["error"]["message"].get<std::string>(),
              HasSubstr("[limits] spec_mib_per_user"));
}

}  // namespace
}  // namespace gleaner::server
