#include "store/join_token_check.h"
#include "store/pg_connection.h"
#include "store/pg_store.h"
#include "store/row_codec.h"

namespace gleaner::store {

using core::Status;
using pg::Row;
using pg::Rows;

namespace {

// In TokenFromRow's order.
constexpr const char* kTokenColumns =
    "id, user_name, uid, name, created_us, revoked_us, expires_us, scopes, projects";

}  // namespace

core::Result<TokenRecord> PgStore::AddToken(const TokenRecord& token, const std::string& sha256) {
  GLEANER_ASSIGN_OR_RETURN(
      Rows inserted,
      db_->Query(R"sql(
    INSERT INTO api_tokens (user_name, uid, name, sha256, created_us, expires_us, scopes,
                            projects)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id)sql",
                 {token.user, static_cast<int64_t>(token.uid), token.name, sha256,
                  core::ToUnixMicros(token.created_at),
                  token.expires_at ? pg::Param(core::ToUnixMicros(*token.expires_at))
                                   : pg::Param(std::nullopt),
                  token.scopes ? pg::Param(JoinList(*token.scopes)) : pg::Param(std::nullopt),
                  JoinList(token.projects)},
                 "saving the token"));
  TokenRecord saved = token;
  saved.id = inserted.Int(0, 0);
  saved.revoked_at.reset();
  return saved;
}

core::Result<TokenRecord> PgStore::FindToken(const std::string& sha256) {
  GLEANER_ASSIGN_OR_RETURN(Rows rows,
                           db_->Query((std::string("SELECT ") + kTokenColumns +
                                       " FROM api_tokens WHERE sha256 = $1 AND revoked_us IS NULL")
                                          .c_str(),
                                      {sha256}, "reading tokens"));
  if (rows.empty()) return core::NotFound("unknown or revoked token");
  return TokenFromRow(Row(rows, 0));
}

core::Result<std::vector<TokenRecord>> PgStore::ListTokens() {
  GLEANER_ASSIGN_OR_RETURN(
      Rows rows,
      db_->Query((std::string("SELECT ") + kTokenColumns + " FROM api_tokens ORDER BY id").c_str(),
                 {}, "listing tokens"));
  std::vector<TokenRecord> out;
  out.reserve(static_cast<size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) out.push_back(TokenFromRow(Row(rows, i)));
  return out;
}

Status PgStore::RevokeToken(int64_t id, core::TimePoint now) {
  GLEANER_ASSIGN_OR_RETURN(
      Rows updated,
      db_->Query("UPDATE api_tokens SET revoked_us = $1 WHERE id = $2 AND revoked_us IS NULL",
                 {core::ToUnixMicros(now), id}, "revoking token " + std::to_string(id)));
  if (updated.affected() != 1) return core::NotFound("no live token " + std::to_string(id));
  return Status::Ok();
}

Status PgStore::AddJoinToken(const JoinToken& token, const std::string& sha256) {
  return db_
      ->Query(R"sql(
    INSERT INTO agent_join_tokens (sha256, host, replace_joined, created_us, expires_us)
    VALUES ($1, $2, $3, $4, $5))sql",
              {sha256, token.host, int64_t{token.replace ? 1 : 0},
               core::ToUnixMicros(token.created_at), core::ToUnixMicros(token.expires_at)},
              "saving the join token")
      .status();
}

core::Result<int64_t> PgStore::SpendJoinToken(const std::string& sha256, const std::string& host,
                                              core::TimePoint now) {
  int64_t generation = 0;
  const Status s = db_->InTransaction([&]() -> Status {
    // Joins of one host take turns, so two first joins cannot both see it
    // unjoined; FOR UPDATE makes a second spend of one token wait, then
    // see it spent.
    GLEANER_RETURN_IF_ERROR(db_->Query("SELECT pg_advisory_xact_lock(hashtext($1))",
                                       {"gleaner-agent-join:" + host}, "waiting for the join lock")
                                .status());
    GLEANER_ASSIGN_OR_RETURN(Rows rows,
                             db_->Query("SELECT host, replace_joined, expires_us, used_us "
                                        "FROM agent_join_tokens WHERE sha256 = $1 FOR UPDATE",
                                        {sha256}, "reading join tokens"));
    std::optional<StoredJoinToken> token;
    if (!rows.empty()) {
      token = StoredJoinToken{
          rows.Text(0, 0), rows.Int(0, 1) != 0, core::FromUnixMicros(rows.Int(0, 2)),
          rows.Null(0, 3) ? std::nullopt : std::optional(core::FromUnixMicros(rows.Int(0, 3)))};
    }
    GLEANER_ASSIGN_OR_RETURN(generation, AgentGeneration(host));
    GLEANER_RETURN_IF_ERROR(CheckJoinToken(token, host, now, generation));
    GLEANER_RETURN_IF_ERROR(
        db_->Query("UPDATE agent_join_tokens SET used_us = $1 WHERE sha256 = $2",
                   {core::ToUnixMicros(now), sha256}, "spending the join token")
            .status());
    GLEANER_ASSIGN_OR_RETURN(Rows joined,
                             db_->Query(R"sql(
        INSERT INTO agent_hosts (name, generation, joined_us) VALUES ($1, 1, $2)
        ON CONFLICT (name) DO UPDATE SET generation = agent_hosts.generation + 1,
                                         joined_us = excluded.joined_us
        RETURNING generation)sql",
                                        {host, core::ToUnixMicros(now)}, "recording the join"));
    generation = joined.Int(0, 0);
    return Status::Ok();
  });
  GLEANER_RETURN_IF_ERROR(s);
  return generation;
}

core::Result<int64_t> PgStore::AgentGeneration(const std::string& host) {
  GLEANER_ASSIGN_OR_RETURN(Rows rows,
                           db_->Query("SELECT generation FROM agent_hosts WHERE name = $1", {host},
                                      "reading joined hosts"));
  return rows.empty() ? int64_t{0} : rows.Int(0, 0);
}

core::Result<std::map<std::string, int64_t>> PgStore::AgentGenerations() {
  GLEANER_ASSIGN_OR_RETURN(Rows rows, db_->Query("SELECT name, generation FROM agent_hosts", {},
                                                 "reading joined hosts"));
  std::map<std::string, int64_t> out;
  for (int i = 0; i < rows.size(); ++i) out.emplace(rows.Text(i, 0), rows.Int(i, 1));
  return out;
}

}  // namespace gleaner::store
