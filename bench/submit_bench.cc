// Durable submits through the API: real Unix-socket requests from parallel
// clients to the real JobApi on SQLite in a file (synchronous=FULL, so each
// acknowledged job is on disk), from 1,000 users in turn, with and without
// the per-user limits checked; and what that check reads for a user at the
// limit. Figures: docs/benchmarks.md.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>

#include "core/mutex.h"
#include "net/http_client.h"
#include "server/http_server.h"
#include "server/job_api.h"
#include "store/sqlite_store.h"

namespace gleaner {
namespace {

struct Stack {
  std::string dir;
  std::unique_ptr<store::SqliteStore> store;
  core::RealClock clock;
  core::Mutex store_mu;
  std::unique_ptr<server::JobApi> api;
  std::unique_ptr<server::HttpServer> server;
  net::Endpoint socket;
  std::atomic<uint32_t> next_user{0};
};

// A server with the default limits (`limited`) or none.
Stack& Shared(bool limited) {
  static Stack* stacks[2] = {nullptr, nullptr};
  static std::mutex mu;
  std::lock_guard lock(mu);
  Stack*& s = stacks[limited ? 1 : 0];
  if (s != nullptr) return *s;
  s = new Stack();
  s->dir = std::filesystem::temp_directory_path() /
           ("gleaner-bench-" + std::to_string(getpid()) + (limited ? "-limited" : "-open"));
  std::filesystem::create_directories(s->dir);
  s->store = std::move(store::SqliteStore::Open(s->dir + "/gleaner.db")).value();
  server::SubmitLimits limits;
  if (!limited) limits = {0, 0, 0, 0};
  s->api = std::make_unique<server::JobApi>(*s->store, s->store_mu, s->clock, sched::JobLimits{},
                                            limits, s->dir);
  s->socket.unix_path = s->dir + "/g.sock";
  Stack* stack = s;
  s->server =
      std::move(server::HttpServer::ServeUnix(s->socket.unix_path, [stack](
                                                                       const server::HttpRequest& r,
                                                                       const server::Peer&) {
        // 1,000 users in turn, each well within its limit.
        const uint32_t uid = 100'000 + stack->next_user++ % 1000;
        return stack->api->Handle(r, {uid, "u" + std::to_string(uid)});
      })).value();
  std::atexit([] {
    for (Stack* st : stacks) {
      if (st != nullptr) std::filesystem::remove_all(st->dir);
    }
  });
  return *s;
}

void BM_SubmitOverSocket(benchmark::State& state) {
  Stack& s = Shared(state.range(0) == 1);
  const std::string body = R"({"command": ["python", "sweep.py", "--lr", "3e-4"], "gpus": 1})";
  for (auto _ : state) {
    auto r = net::HttpCall(s.socket, "POST", "/v1/jobs", body);
    if (!r.ok() || r->first != 201) state.SkipWithError("submit failed");
  }
  state.SetItemsProcessed(state.iterations());
}
// Arg: 0 no limits checked, 1 the default limits.
BENCHMARK(BM_SubmitOverSocket)
    ->ArgName("limits")
    ->Arg(0)
    ->Arg(1)
    ->Threads(1)
    ->Threads(8)
    ->UseRealTime()
    ->MinTime(2.0);

// What a submit's check reads for a user who holds 10,000 queued jobs (the
// default limit): one past the limit, from the covering index.
void BM_UsageOfAUserAtTheLimit(benchmark::State& state) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("gleaner-bench-usage-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto store = std::move(store::SqliteStore::Open(dir + "/gleaner.db")).value();
  sched::JobSpec spec;
  spec.command = {"python", "sweep.py"};
  spec.array = sched::ArraySpec{};
  spec.array->first = 1;
  spec.array->last = 10'000;
  spec.array->step = 1;
  if (!store->Submit("heavy", 1, spec, core::RealClock().Now()).ok()) {
    state.SkipWithError("seeding failed");
  }
  for (auto _ : state) {
    auto usage = store->UsageOfUser(1, 10'001);
    if (!usage.ok() || usage->jobs != 10'000) state.SkipWithError("wrong count");
    benchmark::DoNotOptimize(usage);
  }
  store.reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_UsageOfAUserAtTheLimit)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gleaner

BENCHMARK_MAIN();
