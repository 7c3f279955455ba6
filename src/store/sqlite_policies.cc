#include "store/sqlite_statement.h"
#include "store/sqlite_store.h"

namespace gleaner::store {

using core::Status;
using sqlite::SqlError;
using sqlite::Statement;

core::Result<PolicyVersion> SqliteStore::AddPolicy(const PolicyVersion& policy,
                                                   const std::string& event) {
  PolicyVersion saved = policy;
  const Status s = InTransaction([&]() -> Status {
    Statement insert(db_, "INSERT INTO policies (at_us, author, note, text) VALUES (?, ?, ?, ?)");
    GLEANER_RETURN_IF_ERROR(insert.status());
    insert.Bind(1, core::ToUnixMicros(policy.at));
    insert.Bind(2, policy.author);
    insert.Bind(3, policy.note);
    insert.Bind(4, policy.text);
    if (insert.Step() != SQLITE_DONE) return SqlError(db_, "saving the policy");
    saved.version = sqlite3_last_insert_rowid(db_);
    Statement history(db_, R"sql(
      INSERT INTO events (at_us, kind, job_id, user, actor, gpus, detail)
      VALUES (?, ?, NULL, ?, ?, '', ?))sql");
    GLEANER_RETURN_IF_ERROR(history.status());
    history.Bind(1, core::ToUnixMicros(policy.at));
    history.Bind(2, event);
    history.Bind(3, policy.author);
    history.Bind(4, policy.author);
    history.Bind(5, "version " + std::to_string(saved.version) +
                        (policy.note.empty() ? "" : ": " + policy.note));
    if (history.Step() != SQLITE_DONE) return SqlError(db_, "recording the policy's version");
    return Status::Ok();
  });
  GLEANER_RETURN_IF_ERROR(s);
  return saved;
}

core::Result<PolicyVersion> SqliteStore::GetPolicy(int64_t version) {
  Statement q(db_, version > 0 ? "SELECT version, at_us, author, note, text FROM policies "
                                 "WHERE version = ?"
                               : "SELECT version, at_us, author, note, text FROM policies "
                                 "ORDER BY version DESC LIMIT 1");
  GLEANER_RETURN_IF_ERROR(q.status());
  if (version > 0) q.Bind(1, version);
  const int rc = q.Step();
  if (rc == SQLITE_DONE) {
    return core::NotFound(version > 0 ? "no policy version " + std::to_string(version)
                                      : std::string("no policy has been recorded"));
  }
  if (rc != SQLITE_ROW) return SqlError(db_, "reading the policy");
  return PolicyVersion{q.Int(0), core::FromUnixMicros(q.Int(1)), q.Text(2), q.Text(3), q.Text(4)};
}

core::Result<std::vector<PolicyVersion>> SqliteStore::ListPolicies(int64_t limit) {
  Statement q(db_,
              "SELECT version, at_us, author, note FROM policies ORDER BY version DESC LIMIT ?");
  GLEANER_RETURN_IF_ERROR(q.status());
  q.Bind(1, limit);
  std::vector<PolicyVersion> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    out.push_back({q.Int(0), core::FromUnixMicros(q.Int(1)), q.Text(2), q.Text(3), ""});
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "listing the policy's versions");
  return out;
}

}  // namespace gleaner::store
