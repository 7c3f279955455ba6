#include "store/open_store.h"

#include "store/sqlite_store.h"

#ifdef GLEANER_WITH_POSTGRES
#include "store/pg_store.h"
#endif

namespace gleaner::store {

bool PostgresSupported() {
#ifdef GLEANER_WITH_POSTGRES
  return true;
#else
  return false;
#endif
}

bool IsPostgresUri(const std::string& where) {
  return where.starts_with("postgresql://") || where.starts_with("postgres://");
}

core::Result<std::unique_ptr<Store>> OpenStore(const std::string& where) {
  if (!IsPostgresUri(where)) {
    GLEANER_ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> store, SqliteStore::Open(where));
    return std::unique_ptr<Store>(std::move(store));
  }
#ifdef GLEANER_WITH_POSTGRES
  GLEANER_ASSIGN_OR_RETURN(std::unique_ptr<PgStore> store, PgStore::Open(where));
  return std::unique_ptr<Store>(std::move(store));
#else
  // The static build carries no libpq: Debian ships it only with Kerberos
  // and LDAP, which have no static archives.
  return core::NotSupported(
      "this gleaner was built without PostgreSQL support (a static build); store in a SQLite "
      "file, or use a gleaner built with libpq (cmake without -DGLEANER_STATIC=ON)");
#endif
}

}  // namespace gleaner::store
