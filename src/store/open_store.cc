#include "store/open_store.h"

#include "store/postgres_entry.h"
#include "store/sqlite_store.h"

namespace gleaner::store {

#ifdef GLEANER_WITH_POSTGRES
bool PostgresSupported() { return true; }
#else
// Weak: null unless the backend is linked in (postgres_entry.h).
bool PostgresSupported() { return OpenPostgresStore != nullptr; }
#endif

bool IsPostgresUri(const std::string& where) {
  return where.starts_with("postgresql://") || where.starts_with("postgres://");
}

core::Status PostgresUnsupported() {
  // The static build carries no libpq: Debian ships it only with Kerberos
  // and LDAP, which have no static archives.
  return core::NotSupported(
      "this gleaner was built without PostgreSQL support (a static build); store in a SQLite "
      "file, or use gleaner-pg, built beside it (it needs libpq5: apt install libpq5)");
}

core::Result<StoreProbe> ProbeStore(const std::string& where) {
  if (IsPostgresUri(where)) {
    if (!PostgresSupported()) return PostgresUnsupported();
    return ProbePostgresStore(where);
  }
  return ProbeSqliteStore(where);
}

core::Result<std::unique_ptr<Store>> OpenStore(const std::string& where) {
  if (!IsPostgresUri(where)) {
    GLEANER_ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> store, SqliteStore::Open(where));
    return std::unique_ptr<Store>(std::move(store));
  }
  if (!PostgresSupported()) return PostgresUnsupported();
  return OpenPostgresStore(where);
}

}  // namespace gleaner::store
