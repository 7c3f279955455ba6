#include "store/join_token_check.h"
#include "store/row_codec.h"
#include "store/sqlite_statement.h"
#include "store/sqlite_store.h"

namespace gleaner::store {

using core::Status;
using sqlite::SqlError;
using sqlite::Statement;

namespace {

// In TokenFromRow's order.
constexpr const char* kTokenColumns =
    "id, user, uid, name, created_us, revoked_us, expires_us, scopes, projects";

}  // namespace

core::Result<TokenRecord> SqliteStore::AddToken(const TokenRecord& token,
                                                const std::string& sha256) {
  Statement insert(db_,
                   "INSERT INTO api_tokens (user, uid, name, sha256, created_us, expires_us, "
                   "scopes, projects) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  GLEANER_RETURN_IF_ERROR(insert.status());
  insert.Bind(1, token.user);
  insert.Bind(2, static_cast<int64_t>(token.uid));
  insert.Bind(3, token.name);
  insert.Bind(4, sha256);
  insert.Bind(5, core::ToUnixMicros(token.created_at));
  if (token.expires_at) insert.Bind(6, core::ToUnixMicros(*token.expires_at));
  if (token.scopes) insert.Bind(7, JoinList(*token.scopes));
  insert.Bind(8, JoinList(token.projects));
  if (insert.Step() != SQLITE_DONE) return SqlError(db_, "saving the token");
  TokenRecord saved = token;
  saved.id = sqlite3_last_insert_rowid(db_);
  saved.revoked_at.reset();
  return saved;
}

core::Result<TokenRecord> SqliteStore::FindToken(const std::string& sha256) {
  Statement q(db_, (std::string("SELECT ") + kTokenColumns +
                    " FROM api_tokens WHERE sha256 = ? AND revoked_us IS NULL")
                       .c_str());
  GLEANER_RETURN_IF_ERROR(q.status());
  q.Bind(1, sha256);
  const int rc = q.Step();
  if (rc == SQLITE_DONE) return core::NotFound("unknown or revoked token");
  if (rc != SQLITE_ROW) return SqlError(db_, "reading tokens");
  return TokenFromRow(q);
}

core::Result<std::vector<TokenRecord>> SqliteStore::ListTokens() {
  Statement q(db_,
              (std::string("SELECT ") + kTokenColumns + " FROM api_tokens ORDER BY id").c_str());
  GLEANER_RETURN_IF_ERROR(q.status());
  std::vector<TokenRecord> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.push_back(TokenFromRow(q));
  if (rc != SQLITE_DONE) return SqlError(db_, "listing tokens");
  return out;
}

Status SqliteStore::RevokeToken(int64_t id, core::TimePoint now) {
  Statement update(db_, "UPDATE api_tokens SET revoked_us = ? WHERE id = ? AND revoked_us IS NULL");
  GLEANER_RETURN_IF_ERROR(update.status());
  update.Bind(1, core::ToUnixMicros(now));
  update.Bind(2, id);
  if (update.Step() != SQLITE_DONE) return SqlError(db_, "revoking token " + std::to_string(id));
  if (sqlite3_changes(db_) != 1) return core::NotFound("no live token " + std::to_string(id));
  return Status::Ok();
}

Status SqliteStore::AddJoinToken(const JoinToken& token, const std::string& sha256) {
  Statement insert(db_,
                   "INSERT INTO agent_join_tokens (sha256, host, replace_joined, created_us, "
                   "expires_us) VALUES (?, ?, ?, ?, ?)");
  GLEANER_RETURN_IF_ERROR(insert.status());
  insert.Bind(1, sha256);
  insert.Bind(2, token.host);
  insert.Bind(3, int64_t{token.replace ? 1 : 0});
  insert.Bind(4, core::ToUnixMicros(token.created_at));
  insert.Bind(5, core::ToUnixMicros(token.expires_at));
  if (insert.Step() != SQLITE_DONE) return SqlError(db_, "saving the join token");
  return Status::Ok();
}

core::Result<int64_t> SqliteStore::SpendJoinToken(const std::string& sha256,
                                                  const std::string& host, core::TimePoint now) {
  int64_t generation = 0;
  const Status s = InTransaction([&]() -> Status {
    GLEANER_ASSIGN_OR_RETURN(generation, AgentGeneration(host));
    Statement q(db_,
                "SELECT host, replace_joined, expires_us, used_us FROM agent_join_tokens "
                "WHERE sha256 = ?");
    GLEANER_RETURN_IF_ERROR(q.status());
    q.Bind(1, sha256);
    std::optional<StoredJoinToken> token;
    const int rc = q.Step();
    if (rc == SQLITE_ROW) {
      token =
          StoredJoinToken{q.Text(0), q.Int(1) != 0, core::FromUnixMicros(q.Int(2)),
                          q.Null(3) ? std::nullopt : std::optional(core::FromUnixMicros(q.Int(3)))};
    } else if (rc != SQLITE_DONE) {
      return SqlError(db_, "reading join tokens");
    }
    GLEANER_RETURN_IF_ERROR(CheckJoinToken(token, host, now, generation));
    Statement spend(db_, "UPDATE agent_join_tokens SET used_us = ? WHERE sha256 = ?");
    GLEANER_RETURN_IF_ERROR(spend.status());
    spend.Bind(1, core::ToUnixMicros(now));
    spend.Bind(2, sha256);
    if (spend.Step() != SQLITE_DONE) return SqlError(db_, "spending the join token");
    Statement joined(db_,
                     "INSERT INTO agent_hosts (name, generation, joined_us) VALUES (?, ?, ?) "
                     "ON CONFLICT (name) DO UPDATE SET generation = excluded.generation, "
                     "joined_us = excluded.joined_us");
    GLEANER_RETURN_IF_ERROR(joined.status());
    joined.Bind(1, host);
    joined.Bind(2, ++generation);
    joined.Bind(3, core::ToUnixMicros(now));
    if (joined.Step() != SQLITE_DONE) return SqlError(db_, "recording the join");
    return Status::Ok();
  });
  GLEANER_RETURN_IF_ERROR(s);
  return generation;
}

core::Result<int64_t> SqliteStore::AgentGeneration(const std::string& host) {
  Statement q(db_, "SELECT generation FROM agent_hosts WHERE name = ?");
  GLEANER_RETURN_IF_ERROR(q.status());
  q.Bind(1, host);
  const int rc = q.Step();
  if (rc == SQLITE_DONE) return int64_t{0};
  if (rc != SQLITE_ROW) return SqlError(db_, "reading joined hosts");
  return q.Int(0);
}

core::Result<std::map<std::string, int64_t>> SqliteStore::AgentGenerations() {
  Statement q(db_, "SELECT name, generation FROM agent_hosts");
  GLEANER_RETURN_IF_ERROR(q.status());
  std::map<std::string, int64_t> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.emplace(q.Text(0), q.Int(1));
  if (rc != SQLITE_DONE) return SqlError(db_, "reading joined hosts");
  return out;
}

}  // namespace gleaner::store
