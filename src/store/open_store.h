#pragma once

#include <memory>
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

// Why this gleaner cannot open a PostgreSQL store (kNotSupported).
core::Status PostgresUnsupported();

// Whether this gleaner can open a PostgreSQL store.
bool PostgresSupported();

// Whether `where` names a PostgreSQL database rather than a SQLite file.
bool IsPostgresUri(const std::string& where);

}  // namespace gleaner::store
