#pragma once

// Internal to the SQLite store: the schema and its versions.

#include <sqlite3.h>

#include <cstdint>

#include "core/status.h"

namespace gleaner::store::sqlite {

// The schema version this gleaner writes and reads.
int64_t LatestSchemaVersion();

// Brings the database's schema up to version `target` (LatestSchemaVersion() but
// in tests of an upgrade), one version per transaction, each recorded in
// PRAGMA user_version. Safe when several processes open a new database at
// once: each step re-reads the version under the write lock, so every step
// runs exactly once. kFailedPrecondition when the database is newer than
// this gleaner.
core::Status MigrateSchema(sqlite3* db, int64_t target);

}  // namespace gleaner::store::sqlite
