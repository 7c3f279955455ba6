#include "pg_backend.h"

#include <memory>

#include "store/pg_store.h"
#include "store_backend.h"
#include "testing/postgres_server.h"

namespace gleaner::store {
namespace {

// Starts the server when a test first needs one (tests of connection
// strings need none), and stops it after the last test.
class PostgresEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { server_.reset(); }

  // The server, or why there is none.
  core::Result<testing::PostgresServer*> Server() {
    if (!tried_) {
      tried_ = true;
      auto started = testing::PostgresServer::Start();
      if (started.ok()) {
        server_ = std::move(started).value();
      } else {
        failure_ = started.status().WithContext("the test's PostgreSQL server");
      }
    }
    if (server_ == nullptr) return failure_;
    return server_.get();
  }

 private:
  bool tried_ = false;
  std::unique_ptr<testing::PostgresServer> server_;
  core::Status failure_ = core::Internal("the test's PostgreSQL server was stopped");
};

// Owned by gtest.
PostgresEnvironment* const environment =
    static_cast<PostgresEnvironment*>(::testing::AddGlobalTestEnvironment(new PostgresEnvironment));

class PostgresBackend : public StoreBackend {
 public:
  std::string name() const override { return "Postgres"; }
  std::optional<std::string> Unavailable() const override { return TestServerUnavailable(); }
  core::Result<std::string> NewPlace(const std::filesystem::path& /*dir*/) override {
    return NewTestDatabase();
  }
  core::Result<std::unique_ptr<Store>> Open(const std::string& where) override {
    GLEANER_ASSIGN_OR_RETURN(std::unique_ptr<PgStore> store, PgStore::Open(where));
    return std::unique_ptr<Store>(std::move(store));
  }
};

}  // namespace

std::optional<std::string> TestServerUnavailable() {
  auto server = environment->Server();
  if (server.ok() || server.status().code() != core::StatusCode::kNotFound) return std::nullopt;
  return server.status().message();
}

core::Result<std::string> NewTestDatabase() {
  static int made = 0;
  GLEANER_ASSIGN_OR_RETURN(testing::PostgresServer * server, environment->Server());
  return server->CreateDatabase("store_test_" + std::to_string(++made));
}

std::vector<StoreBackend*> BackendsUnderTest() {
  static PostgresBackend postgres;
  return {&postgres};
}

}  // namespace gleaner::store
