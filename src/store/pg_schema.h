#pragma once

// Internal to the PostgreSQL store: the schema and its versions.

#include <cstdint>

#include "core/status.h"
#include "store/pg_connection.h"

namespace gleaner::store::pg {

// The schema version this gleaner writes and reads.
int64_t LatestSchemaVersion();

// Brings the database's schema up to version `target` (LatestSchemaVersion() but
// in tests of an upgrade), one version per transaction, each recorded in
// the gleaner_schema table. Safe when several processes open a new
// database at once: an advisory lock makes them take turns, and each step
// re-reads the version under the lock, so every step runs exactly once.
// kFailedPrecondition when the database is newer than this gleaner.
core::Status MigrateSchema(Connection& db, int64_t target);

}  // namespace gleaner::store::pg
