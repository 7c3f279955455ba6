#include "store/row_codec.h"
#include "store/sqlite_statement.h"
#include "store/sqlite_store.h"

namespace gleaner::store {

using core::Status;
using sqlite::SqlError;
using sqlite::Statement;

namespace {

// In EventFromRow's order.
constexpr const char* kEventColumns = "id, at_us, kind, job_id, user, actor, gpus, detail";

}  // namespace

core::Result<EventRecord> SqliteStore::AppendEvent(const EventRecord& event) {
  Statement insert(db_, R"sql(
    INSERT INTO events (at_us, kind, job_id, user, actor, gpus, detail)
    VALUES (?, ?, ?, ?, ?, ?, ?))sql");
  GLEANER_RETURN_IF_ERROR(insert.status());
  insert.Bind(1, core::ToUnixMicros(event.at));
  insert.Bind(2, event.kind);
  insert.BindOptional(3, event.job);
  insert.Bind(4, event.user);
  insert.Bind(5, event.actor);
  insert.Bind(6, GpuListText(event.gpus));
  insert.Bind(7, event.detail);
  if (insert.Step() != SQLITE_DONE) return SqlError(db_, "recording a " + event.kind + " event");
  EventRecord saved = event;
  saved.id = sqlite3_last_insert_rowid(db_);
  return saved;
}

Status SqliteStore::RecordMove(sched::JobId id, JobState from, JobState to, const JobUpdate& u) {
  // The job's user and GPUs as the move left them.
  Statement insert(db_, R"sql(
    INSERT INTO events (at_us, kind, job_id, user, actor, gpus, detail)
    SELECT ?, ?, id, user, ?, gpus, ? FROM jobs WHERE id = ?)sql");
  GLEANER_RETURN_IF_ERROR(insert.status());
  insert.Bind(1, core::ToUnixMicros(MoveTime(u)));
  insert.Bind(2, u.event.empty() ? std::string(EventOfMove(from, to)) : u.event);
  insert.Bind(3, u.actor.empty() ? std::string("gleaner") : u.actor);
  insert.Bind(4, u.reason);
  insert.Bind(5, static_cast<int64_t>(id));
  if (insert.Step() != SQLITE_DONE) {
    return SqlError(db_, "recording the history of job " + std::to_string(id));
  }
  return Status::Ok();
}

core::Result<std::vector<EventRecord>> SqliteStore::Events(const EventQuery& query) {
  // The SQL carries placeholders only, never a value.
  std::string sql = std::string("SELECT ") + kEventColumns + " FROM events WHERE id > ?";
  if (query.job) sql += " AND job_id = ?";
  if (!query.user.empty()) sql += " AND user = ?";
  if (!query.kind.empty()) sql += " AND kind = ?";
  if (query.since) sql += " AND at_us >= ?";
  sql += " ORDER BY id";
  if (query.limit > 0) sql += " LIMIT ?";
  Statement q(db_, sql.c_str());
  GLEANER_RETURN_IF_ERROR(q.status());
  int param = 1;
  q.Bind(param++, query.after);
  if (query.job) q.Bind(param++, static_cast<int64_t>(*query.job));
  if (!query.user.empty()) q.Bind(param++, query.user);
  if (!query.kind.empty()) q.Bind(param++, query.kind);
  if (query.since) q.Bind(param++, core::ToUnixMicros(*query.since));
  if (query.limit > 0) q.Bind(param++, query.limit);
  std::vector<EventRecord> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.push_back(EventFromRow(q));
  if (rc != SQLITE_DONE) return SqlError(db_, "reading the history");
  return out;
}

core::Result<int64_t> SqliteStore::PruneEvents(core::TimePoint before) {
  Statement prune(db_, "DELETE FROM events WHERE at_us < ?");
  GLEANER_RETURN_IF_ERROR(prune.status());
  prune.Bind(1, core::ToUnixMicros(before));
  if (prune.Step() != SQLITE_DONE) return SqlError(db_, "pruning the history");
  return static_cast<int64_t>(sqlite3_changes(db_));
}

}  // namespace gleaner::store
