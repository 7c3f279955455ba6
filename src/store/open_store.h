#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/result.h"
#include "store/store.h"

namespace gleaner::store {

// Opens the store `where` names: a PostgreSQL URI ("postgresql://..." or
// "postgres://...", docs/postgres.md) opens a PgStore; anything else is the
// path of a SQLite file (":memory:" for one in memory). Errors are those of
// PgStore::Open and SqliteStore::Open; in a gleaner built without
// PostgreSQL (the static build), a PostgreSQL URI is kNotSupported.
core::Result<std::unique_ptr<Store>> OpenStore(const std::string& where);

// What a store holds, read without changing anything (no migration, no
// journal switch): for `gleaner doctor`, which must not upgrade a schema
// under servers still running the old release.
struct StoreProbe {
  int64_t schema_version = 0;  // 0: a store not yet made
  int64_t latest_version = 0;  // the one this gleaner writes
  // PostgreSQL's clock minus this host's, where the server has one.
  std::optional<core::Duration> clock_offset;
};
// kNotFound for a SQLite file that does not exist yet; the errors of
// opening it otherwise (an unreachable server, a refused login).
core::Result<StoreProbe> ProbeStore(const std::string& where);

// Why this gleaner cannot open a PostgreSQL store (kNotSupported).
core::Status PostgresUnsupported();

// Whether this gleaner can open a PostgreSQL store.
bool PostgresSupported();

// Whether `where` names a PostgreSQL database rather than a SQLite file.
bool IsPostgresUri(const std::string& where);

}  // namespace gleaner::store
