// The PostgreSQL backend's entry points (postgres_entry.h): the store, and
// the leader lease as a session advisory lock.
#include <chrono>

#include "store/open_store.h"
#include "store/pg_connection.h"
#include "store/pg_schema.h"
#include "store/pg_store.h"
#include "store/postgres_entry.h"

namespace gleaner::store {

namespace {

// The advisory lock's key: "glnr", so that other users of the database's
// advisory locks are unlikely to collide with it.
constexpr int64_t kLeaderLockKey = 0x676c6e72;

class PgLease final : public LeaderLease {
 public:
  explicit PgLease(pg::Connection connection) : connection_(std::move(connection)) {}

  core::Result<bool> Hold() override {
    if (!held_) {
      // PostgreSQL frees a session's locks when it sees the client gone: at
      // once when the leader's process dies, but when its machine dies or
      // is cut off, only once TCP says so. These settings (on this
      // session's socket at the server; a Unix socket ignores them) make
      // that about 4 s rather than the kernel's hours.
      GLEANER_RETURN_IF_ERROR(
          connection_.Script("SET tcp_keepalives_idle = 2; SET tcp_keepalives_interval = 1; "
                             "SET tcp_keepalives_count = 2; SET tcp_user_timeout = 4000",
                             "leader lease keepalives"));
      GLEANER_ASSIGN_OR_RETURN(pg::Rows taken, connection_.Query("SELECT pg_try_advisory_lock($1)",
                                                                 {kLeaderLockKey}, "leader lease"));
      held_ = taken.Text(0, 0) == "t";
      return held_;
    }
    // The connection may have broken and been opened again, silently
    // without the lock: ask the server whether this session holds it.
    auto still = connection_.Query(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
        "AND pid = pg_backend_pid() AND classid = 0 AND objid = $1 AND objsubid = 1",
        {kLeaderLockKey}, "leader lease");
    held_ = still.ok() && still->Int(0, 0) == 1;
    return held_;
  }

 private:
  pg::Connection connection_;
  bool held_ = false;
};

}  // namespace

core::Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& where) {
  GLEANER_ASSIGN_OR_RETURN(std::unique_ptr<PgStore> store, PgStore::Open(where));
  return std::unique_ptr<Store>(std::move(store));
}

core::Result<StoreProbe> ProbePostgresStore(const std::string& where) {
  GLEANER_ASSIGN_OR_RETURN(pg::Connection db, pg::Connection::Open(where));
  StoreProbe probe;
  probe.latest_version = pg::LatestSchemaVersion();
  GLEANER_ASSIGN_OR_RETURN(
      pg::Rows made,
      db.Query("SELECT to_regclass('gleaner_schema') IS NOT NULL", {}, "reading the schema"));
  if (made.Text(0, 0) == "t") {
    GLEANER_ASSIGN_OR_RETURN(
        pg::Rows version,
        db.Query("SELECT COALESCE(MAX(version), 0) FROM gleaner_schema", {}, "reading the schema"));
    probe.schema_version = version.Int(0, 0);
  }
  // The server's clock, halfway through the round trip.
  const auto before = std::chrono::system_clock::now();
  GLEANER_ASSIGN_OR_RETURN(
      pg::Rows now, db.Query("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint", {},
                             "reading the server's clock"));
  const auto after = std::chrono::system_clock::now();
  const auto midpoint = std::chrono::time_point_cast<core::Duration>(before + (after - before) / 2);
  probe.clock_offset = core::FromUnixMicros(now.Int(0, 0)) - midpoint;
  return probe;
}

core::Result<std::unique_ptr<LeaderLease>> OpenPostgresLease(const std::string& where) {
  GLEANER_ASSIGN_OR_RETURN(pg::Connection connection, pg::Connection::Open(where));
  return std::unique_ptr<LeaderLease>(std::make_unique<PgLease>(std::move(connection)));
}

}  // namespace gleaner::store
