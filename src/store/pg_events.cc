#include "store/pg_connection.h"
#include "store/pg_store.h"
#include "store/row_codec.h"

namespace gleaner::store {

using core::Status;
using pg::Param;
using pg::Row;
using pg::Rows;

namespace {

// In EventFromRow's order.
constexpr const char* kEventColumns = "id, at_us, kind, job_id, user_name, actor, gpus, detail";

}  // namespace

core::Result<EventRecord> PgStore::AppendEvent(const EventRecord& event) {
  GLEANER_ASSIGN_OR_RETURN(
      Rows inserted, db_->Query(R"sql(
        INSERT INTO events (at_us, kind, job_id, user_name, actor, gpus, detail)
        VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id)sql",
                                {core::ToUnixMicros(event.at), event.kind, event.job, event.user,
                                 event.actor, GpuListText(event.gpus), event.detail},
                                "recording a " + event.kind + " event"));
  EventRecord saved = event;
  saved.id = inserted.Int(0, 0);
  return saved;
}

Status PgStore::RecordMove(sched::JobId id, JobState from, JobState to, const JobUpdate& u) {
  // The job's user and GPUs as the move left them.
  return db_
      ->Query(R"sql(
        INSERT INTO events (at_us, kind, job_id, user_name, actor, gpus, detail)
        SELECT $1::BIGINT, $2::TEXT, id, user_name, $3::TEXT, gpus, $4::TEXT FROM jobs WHERE id = $5)sql",
              {core::ToUnixMicros(MoveTime(u)),
               u.event.empty() ? std::string(EventOfMove(from, to)) : u.event,
               u.actor.empty() ? std::string("gleaner") : u.actor, u.reason, id},
              "recording the history of job " + std::to_string(id))
      .status();
}

core::Result<std::vector<EventRecord>> PgStore::Events(const EventQuery& query) {
  // The SQL carries placeholders only, never a value.
  std::vector<Param> params = {query.after};
  std::string sql = std::string("SELECT ") + kEventColumns + " FROM events WHERE id > $1";
  const auto where = [&](const char* column, Param value) {
    params.push_back(std::move(value));
    sql += std::string(" AND ") + column + " $" + std::to_string(params.size());
  };
  if (query.job) where("job_id =", static_cast<int64_t>(*query.job));
  if (!query.user.empty()) where("user_name =", query.user);
  if (!query.kind.empty()) where("kind =", query.kind);
  if (query.since) where("at_us >=", core::ToUnixMicros(*query.since));
  sql += " ORDER BY id";
  if (query.limit > 0) {
    params.push_back(query.limit);
    sql += " LIMIT $" + std::to_string(params.size());
  }
  GLEANER_ASSIGN_OR_RETURN(Rows rows, db_->Query(sql.c_str(), params, "reading the history"));
  std::vector<EventRecord> out;
  out.reserve(static_cast<size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) out.push_back(EventFromRow(Row(rows, i)));
  return out;
}

core::Result<int64_t> PgStore::PruneEvents(core::TimePoint before) {
  GLEANER_ASSIGN_OR_RETURN(
      Rows deleted, db_->Query("DELETE FROM events WHERE at_us < $1", {core::ToUnixMicros(before)},
                               "pruning the history"));
  return deleted.affected();
}

}  // namespace gleaner::store
