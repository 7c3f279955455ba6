#pragma once

// store_pg_test's backend: PostgreSQL, in a throwaway server that the test
// binary starts once, when a test first needs it, and stops after its last
// test (a gtest global environment).
// Each store lives in a database of its own.

#include <optional>
#include <string>

#include "core/result.h"

namespace gleaner::store {

// Why there is no test server, when PostgreSQL is not installed: tests
// skip with this message. A server that is installed but would not start
// is no reason to skip; NewTestDatabase then fails with its log.
std::optional<std::string> TestServerUnavailable();
// A new, empty database on the test server: its URI.
core::Result<std::string> NewTestDatabase();

}  // namespace gleaner::store
