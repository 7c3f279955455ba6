#include "store/pg_connection.h"
#include "store/pg_store.h"
#include "store/row_codec.h"

namespace gleaner::store {

using core::Status;
using pg::Row;
using pg::Rows;

namespace {

// In TokenFromRow's order.
constexpr const char* kTokenColumns = "id, user_name, uid, name, created_us, revoked_us, expires_us";

}  // namespace

core::Result<TokenRecord> PgStore::AddToken(const TokenRecord& token, const std::string& sha256) {
  GLEANER_ASSIGN_OR_RETURN(
      Rows inserted, db_->Query(R"sql(
    INSERT INTO api_tokens (user_name, uid, name, sha256, created_us, expires_us)
    VALUES ($1, $2, $3, $4, $5, $6) RETURNING id)sql",
                                {token.user, static_cast<int64_t>(token.uid), token.name, sha256,
                                 core::ToUnixMicros(token.created_at),
                                 token.expires_at
                                     ? pg::Param(core::ToUnixMicros(*token.expires_at))
                                     : pg::Param(std::nullopt)},
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

}  // namespace gleaner::store
