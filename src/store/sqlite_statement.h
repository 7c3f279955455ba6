#pragma once

// Internal to the SQLite store's files: statements and small codecs.

#include <sqlite3.h>

#include <optional>
#include <string>

#include "core/status.h"

namespace gleaner::store::sqlite {

using core::Status;

inline Status SqlError(sqlite3* db, const std::string& what) {
  return core::Internal(what + ": " + sqlite3_errmsg(db));
}

// Runs statements without parameters (a PRAGMA, BEGIN, a migration).
inline Status Exec(sqlite3* db, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    return core::Internal(std::string("SQL failed: ") + message);
  }
  return Status::Ok();
}

// A prepared statement that finalises itself.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Status status() const { return rc_ == SQLITE_OK ? Status::Ok() : SqlError(db_, "prepare"); }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void Bind(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  void Bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void BindNull(int i) { sqlite3_bind_null(stmt_, i); }
  // Binds the value, or NULL when there is none.
  template <typename T>
  void BindOptional(int i, const std::optional<T>& v) {
    if (v) {
      Bind(i, *v);
    } else {
      BindNull(i);
    }
  }
  // SQLITE_ROW, SQLITE_DONE, or an error code.
  int Step() { return sqlite3_step(stmt_); }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const { return sqlite3_column_double(stmt_, col); }
  bool Null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string Text(int col) const {
    const unsigned char* t = sqlite3_column_text(stmt_, col);
    return t ? reinterpret_cast<const char*>(t) : "";
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

}  // namespace gleaner::store::sqlite
