#pragma once

// Internal to the PostgreSQL store: a libpq connection and its results, as
// values that clean up after themselves, and the one way statements are
// run: with parameters, never with values spliced into the SQL.

#include <libpq-fe.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace gleaner::store::pg {

// One parameter of a statement, sent as text; no value is SQL NULL.
// Implicit from the types the store writes, so a call reads
// Query(sql, {id, user, std::nullopt}, ...). A plain int converts to both
// int64_t and double, which does not compile: say which.
class Param {
 public:
  // NOLINTBEGIN(google-explicit-constructor): implicit by design, see above.
  Param(int64_t v);
  Param(double v);
  Param(std::string v);
  Param(const char* v) : Param(std::string(v)) {}
  Param(std::nullopt_t /*null*/) {}
  template <typename T>
  Param(const std::optional<T>& v) {
    if (v) text_ = Param(*v).text_;
  }
  // NOLINTEND(google-explicit-constructor)

  const std::optional<std::string>& text() const { return text_; }

 private:
  std::optional<std::string> text_;
};

// The rows a statement returned (text format), and how many it changed.
class Rows {
 public:
  explicit Rows(PGresult* result) : result_(result, &PQclear) {}

  int size() const { return PQntuples(result_.get()); }
  bool empty() const { return size() == 0; }
  // Rows changed by an INSERT, UPDATE or DELETE.
  int64_t affected() const;
  // The command tag: "COMMIT", "ROLLBACK", "UPDATE 3".
  std::string command() const { return PQcmdStatus(result_.get()); }
  // The server's error message; empty when there is none.
  std::string error() const { return PQresultErrorMessage(result_.get()); }
  ExecStatusType status() const { return PQresultStatus(result_.get()); }

  bool Null(int row, int col) const { return PQgetisnull(result_.get(), row, col) != 0; }
  std::string Text(int row, int col) const { return PQgetvalue(result_.get(), row, col); }
  // 0 for NULL: the column's own type guarantees the text is a number.
  int64_t Int(int row, int col) const;
  double Real(int row, int col) const;

 private:
  std::unique_ptr<PGresult, decltype(&PQclear)> result_;
};

// One row of Rows, read the way row_codec.h reads a row.
class Row {
 public:
  Row(const Rows& rows, int row) : rows_(rows), row_(row) {}
  bool Null(int col) const { return rows_.Null(row_, col); }
  std::string Text(int col) const { return rows_.Text(row_, col); }
  int64_t Int(int col) const { return rows_.Int(row_, col); }
  double Real(int col) const { return rows_.Real(row_, col); }

 private:
  const Rows& rows_;
  int row_;
};

// A connection to one database. Move-only; not thread-safe. A connection
// found broken (the server restarted, the network dropped) is opened again
// by the next statement outside a transaction; the statement that found it
// broken fails with kUnavailable, and so does the rest of a transaction it
// broke in, which is never carried on outside it.
class Connection {
 public:
  // Connects with a libpq connection string ("host=/run/postgresql
  // dbname=gleaner") or URI ("postgresql://host:5432/gleaner"). Errors:
  // kInvalidArgument for a malformed string, kUnavailable when the server
  // cannot be reached or refuses; both name the server, never the password.
  static core::Result<Connection> Open(const std::string& conninfo);

  // Runs one statement with `params` as $1, $2, ... A failure says
  // "`what`: the server's message".
  core::Result<Rows> Query(const char* sql, const std::vector<Param>& params,
                           std::string_view what);
  // Runs statements without parameters (a migration's script).
  core::Status Script(const char* sql, std::string_view what);

  // Runs `body` in a transaction: committed when it returns ok (and this
  // returns only once COMMIT has), rolled back when it fails, with its error.
  core::Status InTransaction(const std::function<core::Status()>& body);

  // Where this connection goes, without the password: "host=/tmp/x
  // port=5433 dbname=gleaner".
  const std::string& target() const { return target_; }

 private:
  Connection(PGconn* conn, std::string target)
      : conn_(conn, &PQfinish), target_(std::move(target)) {}
  // Query on a connection known to be up.
  core::Result<Rows> Run(const char* sql, const std::vector<Param>& params, std::string_view what);
  core::Status PrepareSession();
  core::Status EnsureConnected();
  core::Status Failure(std::string_view what, const Rows& rows) const;

  std::unique_ptr<PGconn, decltype(&PQfinish)> conn_;
  std::string target_;
  bool in_transaction_ = false;
};

// Text as PostgreSQL can store it: UTF-8 without NUL bytes. Invalid UTF-8
// and NUL become U+FFFD, as the store's JSON columns already do with
// invalid UTF-8, so that a stray byte in a command line or a reason never
// fails a write. Valid text comes back unchanged.
std::string StorableText(std::string text);

}  // namespace gleaner::store::pg
