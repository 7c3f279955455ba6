#include "store/pg_connection.h"
#include "store/pg_store.h"

namespace gleaner::store {

using pg::Rows;

core::Result<PolicyVersion> PgStore::AddPolicy(const PolicyVersion& policy,
                                               const std::string& event) {
  // The version and its event, in one statement.
  GLEANER_ASSIGN_OR_RETURN(Rows inserted, db_->Query(R"sql(
        WITH saved AS (
          INSERT INTO policies (at_us, author, note, text) VALUES ($1, $2, $3, $4)
          RETURNING version),
        recorded AS (
          INSERT INTO events (at_us, kind, job_id, user_name, actor, gpus, detail)
          SELECT $1::BIGINT, $5::TEXT, NULL, $2::TEXT, $2::TEXT, '',
                 'version ' || version || CASE WHEN $3::TEXT = '' THEN '' ELSE ': ' || $3::TEXT END
          FROM saved)
        SELECT version FROM saved)sql",
                                                     {core::ToUnixMicros(policy.at), policy.author,
                                                      policy.note, policy.text, event},
                                                     "saving the policy"));
  PolicyVersion saved = policy;
  saved.version = inserted.Int(0, 0);
  return saved;
}

core::Result<PolicyVersion> PgStore::GetPolicy(int64_t version) {
  GLEANER_ASSIGN_OR_RETURN(
      Rows rows, db_->Query(version > 0 ? "SELECT version, at_us, author, note, text FROM policies "
                                          "WHERE version = $1"
                                        : "SELECT version, at_us, author, note, text FROM policies "
                                          "WHERE $1::BIGINT = 0 ORDER BY version DESC LIMIT 1",
                            {version}, "reading the policy"));
  if (rows.empty()) {
    return core::NotFound(version > 0 ? "no policy version " + std::to_string(version)
                                      : std::string("no policy has been recorded"));
  }
  return PolicyVersion{rows.Int(0, 0), core::FromUnixMicros(rows.Int(0, 1)), rows.Text(0, 2),
                       rows.Text(0, 3), rows.Text(0, 4)};
}

core::Result<std::vector<PolicyVersion>> PgStore::ListPolicies(int64_t limit) {
  GLEANER_ASSIGN_OR_RETURN(
      Rows rows,
      db_->Query("SELECT version, at_us, author, note FROM policies ORDER BY version DESC LIMIT $1",
                 {limit}, "listing the policy's versions"));
  std::vector<PolicyVersion> out;
  for (int i = 0; i < rows.size(); ++i) {
    out.push_back({rows.Int(i, 0), core::FromUnixMicros(rows.Int(i, 1)), rows.Text(i, 2),
                   rows.Text(i, 3), ""});
  }
  return out;
}

}  // namespace gleaner::store
