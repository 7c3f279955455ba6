// Durable submits through the API: real Unix-socket requests from parallel
// clients to the real JobApi on SQLite in a file (synchronous=FULL, so each
// acknowledged job is on disk). Figures: docs/benchmarks.md.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

#include "server/http_client.h"
#include "server/http_server.h"
#include "server/job_api.h"
#include "store/sqlite_store.h"

namespace gleaner {
namespace {

struct Stack {
  std::string dir;
  std::unique_ptr<store::SqliteStore> store;
  core::RealClock clock;
  std::mutex store_mu;
  std::unique_ptr<server::JobApi> api;
  std::unique_ptr<server::HttpServer> server;
  server::Endpoint socket;
};

Stack& Shared() {
  static Stack* stack = [] {
    auto* s = new Stack();
    s->dir = std::filesystem::temp_directory_path() / ("gleaner-bench-" + std::to_string(getpid()));
    std::filesystem::create_directories(s->dir);
    s->store = std::move(store::SqliteStore::Open(s->dir + "/gleaner.db")).value();
    // Limits far above what the bench submits: each commit still adds up
    // what its users hold, as a daemon does.
    server::SubmitLimits limits;
    limits.jobs_per_user = limits.jobs_per_project = int64_t{1} << 40;
    limits.spec_bytes_per_user = limits.spec_bytes_per_project = int64_t{1} << 50;
    s->api = std::make_unique<server::JobApi>(*s->store, s->store_mu, s->clock, sched::JobLimits{},
                                              limits, s->dir);
    s->socket.unix_path = s->dir + "/g.sock";
    s->server = std::move(server::HttpServer::ServeUnix(
                              s->socket.unix_path,
                              [s](const server::HttpRequest& r, const server::Peer& peer) {
                                return s->api->Handle(r, {*peer.uid, "bench"});
                              }))
                    .value();
    std::atexit([] { std::filesystem::remove_all(Shared().dir); });
    return s;
  }();
  return *stack;
}

void BM_SubmitOverSocket(benchmark::State& state) {
  Stack& s = Shared();
  const std::string body = R"({"command": ["python", "sweep.py", "--lr", "3e-4"], "gpus": 1})";
  for (auto _ : state) {
    auto r = server::HttpCall(s.socket, "POST", "/v1/jobs", body);
    if (!r.ok() || r->first != 201) state.SkipWithError("submit failed");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SubmitOverSocket)->Threads(1)->Threads(8)->UseRealTime()->MinTime(2.0);

}  // namespace
}  // namespace gleaner

BENCHMARK_MAIN();
