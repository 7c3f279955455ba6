#pragma once

// The store backends one conformance suite runs against. Each test binary
// links one definition of BackendsUnderTest(): store_test the SQLite ones
// (in memory and on disk), store_pg_test PostgreSQL.

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "store/store.h"
#include "testing/temp_dir.h"

namespace gleaner::store {

class StoreBackend {
 public:
  virtual ~StoreBackend() = default;
  // The name tests are reported under: "SqliteInMemory", "Postgres".
  virtual std::string name() const = 0;
  // Why this backend cannot run on this machine, when it cannot.
  virtual std::optional<std::string> Unavailable() const { return std::nullopt; }
  // Makes room for a new, empty store (in `dir` if it needs a directory)
  // and returns where it is: what Open takes. Every call is a new store.
  virtual core::Result<std::string> NewPlace(const std::filesystem::path& dir) = 0;
  // A connection to the store at `where`; every call is another one.
  virtual core::Result<std::unique_ptr<Store>> Open(const std::string& where) = 0;
  // Whether a second connection, or another process, sees the same store
  // (not for a database in memory): whether the tests of connections that
  // compete run against it.
  virtual bool Shared() const { return true; }
};

std::vector<StoreBackend*> BackendsUnderTest();

// Those whose store more than one connection can share.
inline std::vector<StoreBackend*> SharedBackendsUnderTest() {
  std::vector<StoreBackend*> shared;
  for (StoreBackend* b : BackendsUnderTest()) {
    if (b->Shared()) shared.push_back(b);
  }
  return shared;
}

// A test of every backend under test: store_ is a new, empty store.
class StoreTest : public ::testing::TestWithParam<StoreBackend*> {
 protected:
  void SetUp() override {
    if (auto why = GetParam()->Unavailable()) GTEST_SKIP() << *why;
    auto where = GetParam()->NewPlace(dir_.path());
    ASSERT_TRUE(where.ok()) << where.status().ToString();
    where_ = *where;
    auto opened = GetParam()->Open(where_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
  }

  testing::TempDir dir_;
  std::string where_;
  std::unique_ptr<Store> store_;
};

inline std::string BackendName(const ::testing::TestParamInfo<StoreBackend*>& info) {
  return info.param->name();
}

// How gtest shows a backend in a test's description (GetParam() = Postgres):
// by name, not by an address that changes from run to run.
inline void PrintTo(StoreBackend* backend, std::ostream* out) { *out << backend->name(); }

}  // namespace gleaner::store

// Runs the StoreTest-derived `suite` against every backend under test.
#define GLEANER_STORE_CONFORMANCE(suite)                                               \
  INSTANTIATE_TEST_SUITE_P(Store, suite,                                               \
                           ::testing::ValuesIn(::gleaner::store::BackendsUnderTest()), \
                           ::gleaner::store::BackendName)
// Runs `suite`, whose tests open more connections (GetParam()->Open(where_)),
// against every backend under test whose store can be shared.
#define GLEANER_SHARED_STORE_CONFORMANCE(suite)                                              \
  INSTANTIATE_TEST_SUITE_P(Store, suite,                                                     \
                           ::testing::ValuesIn(::gleaner::store::SharedBackendsUnderTest()), \
                           ::gleaner::store::BackendName)
