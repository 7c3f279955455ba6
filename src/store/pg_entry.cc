// The PostgreSQL backend's entry points (postgres_entry.h): the store, and
// the leader lease as a session advisory lock.
#include "store/pg_connection.h"
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

core::Result<std::unique_ptr<LeaderLease>> OpenPostgresLease(const std::string& where) {
  GLEANER_ASSIGN_OR_RETURN(pg::Connection connection, pg::Connection::Open(where));
  return std::unique_ptr<LeaderLease>(std::make_unique<PgLease>(std::move(connection)));
}

}  // namespace gleaner::store
