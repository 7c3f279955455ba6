#include "store/pg_connection.h"

#include <charconv>
#include <cstdint>

namespace gleaner::store::pg {
namespace {

using core::Status;

// libpq's messages end in a newline and continue on tab-indented lines
// ("...failed: No such file\n\tIs the server running...?"): one line reads
// better inside ours.
std::string OneLine(const char* message) {
  std::string out;
  bool space = false;
  for (const char* c = message ? message : ""; *c != '\0'; ++c) {
    if (*c == '\n' || *c == '\t' || *c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += *c;
  }
  return out.empty() ? "unknown error" : out;
}

// The parts of a connection string that say where it goes. The password
// (and anything else) is left out: this text ends up in logs.
std::string Describe(const PQconninfoOption* options) {
  std::string out;
  for (const char* key : {"host", "hostaddr", "port", "dbname", "user"}) {
    for (const PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
      if (std::string_view(o->keyword) != key || o->val == nullptr || *o->val == '\0') continue;
      out += (out.empty() ? "" : " ") + std::string(key) + "=" + o->val;
    }
  }
  return out.empty() ? "the default server" : out;
}

void IgnoreNotice(void* /*arg*/, const char* /*message*/) {}

template <typename T>
T Parse(const char* text) {
  T value{};
  const std::string_view s(text);
  std::from_chars(s.data(), s.data() + s.size(), value);
  return value;
}

}  // namespace

Param::Param(int64_t v) : text_(std::to_string(v)) {}

Param::Param(double v) {
  // The shortest text that reads back as exactly this double.
  char buffer[32];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, v);
  text_ = error == std::errc() ? std::string(buffer, end) : std::to_string(v);
}

Param::Param(std::string v) : text_(StorableText(std::move(v))) {}

int64_t Rows::affected() const { return Parse<int64_t>(PQcmdTuples(result_.get())); }

int64_t Rows::Int(int row, int col) const {
  return Parse<int64_t>(PQgetvalue(result_.get(), row, col));
}

double Rows::Real(int row, int col) const {
  return Parse<double>(PQgetvalue(result_.get(), row, col));
}

core::Result<Connection> Connection::Open(const std::string& conninfo) {
  char* parse_error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &parse_error);
  if (options == nullptr) {
    const std::string why = parse_error ? OneLine(parse_error) : "out of memory";
    PQfreemem(parse_error);
    return core::InvalidArgument(
        "cannot connect to PostgreSQL: the connection string is malformed: " + why +
        " (expected postgresql://HOST:PORT/DATABASE or \"host=HOST dbname=DATABASE\")");
  }
  std::string target = Describe(options);
  PQconninfoFree(options);

  // Keywords are applied in order and the connection string is expanded
  // where "dbname" stands: what comes before it is a default the string may
  // override, what comes after is not. The store's text is UTF-8.
  const char* const keywords[] = {"connect_timeout", "fallback_application_name", "dbname",
                                  "client_encoding", nullptr};
  const char* const values[] = {"10", "gleaner", conninfo.c_str(), "UTF8", nullptr};
  Connection c(PQconnectdbParams(keywords, values, /*expand_dbname=*/1), std::move(target));
  if (!c.conn_) return core::Unavailable("cannot connect to PostgreSQL at " + c.target_);
  if (PQstatus(c.conn_.get()) != CONNECTION_OK) {
    return core::Unavailable("cannot connect to PostgreSQL at " + c.target_ + ": " +
                             OneLine(PQerrorMessage(c.conn_.get())));
  }
  GLEANER_RETURN_IF_ERROR(c.PrepareSession());
  return c;
}

Status Connection::PrepareSession() {
  // Notices ("relation already exists, skipping") are not errors; libpq
  // would print them on stderr.
  PQsetNoticeProcessor(conn_.get(), &IgnoreNotice, nullptr);
  // An acknowledged write must be on the server's disk. A server or role
  // configured with synchronous_commit=off would acknowledge before that;
  // stronger settings (remote_apply for a standby) are kept.
  auto set =
      Run("SELECT set_config('synchronous_commit', 'on', false)"
          " WHERE current_setting('synchronous_commit') = 'off'",
          {}, "making commits durable");
  return set.ok() ? Status::Ok() : set.status();
}

Status Connection::EnsureConnected() {
  if (PQstatus(conn_.get()) == CONNECTION_OK) return Status::Ok();
  if (in_transaction_) {
    return core::Unavailable("lost the connection to PostgreSQL at " + target_ +
                             " inside a transaction; it was rolled back");
  }
  PQreset(conn_.get());
  if (PQstatus(conn_.get()) != CONNECTION_OK) {
    return core::Unavailable("cannot reconnect to PostgreSQL at " + target_ + ": " +
                             OneLine(PQerrorMessage(conn_.get())));
  }
  return PrepareSession();
}

Status Connection::Failure(std::string_view what, const Rows& rows) const {
  std::string message = rows.error();
  if (message.empty()) message = PQerrorMessage(conn_.get());
  if (PQstatus(conn_.get()) != CONNECTION_OK) {
    return core::Unavailable(std::string(what) + ": lost the connection to PostgreSQL at " +
                             target_ + ": " + OneLine(message.c_str()));
  }
  return core::Internal(std::string(what) + ": " + OneLine(message.c_str()));
}

core::Result<Rows> Connection::Query(const char* sql, const std::vector<Param>& params,
                                     std::string_view what) {
  GLEANER_RETURN_IF_ERROR(EnsureConnected());
  return Run(sql, params, what);
}

core::Result<Rows> Connection::Run(const char* sql, const std::vector<Param>& params,
                                   std::string_view what) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const Param& p : params) values.push_back(p.text() ? p.text()->c_str() : nullptr);
  Rows rows(PQexecParams(conn_.get(), sql, static_cast<int>(values.size()), nullptr, values.data(),
                         nullptr, nullptr, /*resultFormat=text*/ 0));
  // The status of no result (out of memory) is PGRES_FATAL_ERROR.
  if (rows.status() != PGRES_COMMAND_OK && rows.status() != PGRES_TUPLES_OK) {
    return Failure(what, rows);
  }
  return rows;
}

Status Connection::Script(const char* sql, std::string_view what) {
  GLEANER_RETURN_IF_ERROR(EnsureConnected());
  const Rows rows(PQexec(conn_.get(), sql));
  if (rows.status() != PGRES_COMMAND_OK && rows.status() != PGRES_TUPLES_OK) {
    return Failure(what, rows);
  }
  return Status::Ok();
}

Status Connection::InTransaction(const std::function<Status()>& body) {
  GLEANER_RETURN_IF_ERROR(Script("BEGIN", "starting a transaction"));
  in_transaction_ = true;
  Status s = body();
  if (s.ok()) {
    auto commit = Query("COMMIT", {}, "committing");
    // A transaction that hit an error the body did not report is rolled
    // back by COMMIT, which still "succeeds": say so instead.
    if (!commit.ok()) {
      s = commit.status();
    } else if (commit->command() != "COMMIT") {
      s = core::Internal("the transaction was rolled back by the server");
    }
    in_transaction_ = false;
    return s;
  }
  if (PQstatus(conn_.get()) == CONNECTION_OK) {
    Script("ROLLBACK", "rolling back").IgnoreError();  // the body's error is the one to report
  }
  in_transaction_ = false;
  return s;
}

std::string StorableText(std::string text) {
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  size_t i = 0;
  const size_t n = text.size();
  // Fast path: most text is ASCII without NUL.
  const auto plain = [](char c) { return c != '\0' && static_cast<unsigned char>(c) < 0x80; };
  while (i < n && plain(text[i])) ++i;
  if (i == n) return text;
  out.reserve(n + 8);
  out.append(text, 0, i);
  while (i < n) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    uint32_t code = 0;
    uint32_t smallest = 0;  // below this, the sequence is overlong
    if (lead != 0 && lead < 0x80) {
      length = 1;
      code = lead;
    } else if ((lead & 0xE0u) == 0xC0u) {
      length = 2;
      code = lead & 0x1Fu;
      smallest = 0x80;
    } else if ((lead & 0xF0u) == 0xE0u) {
      length = 3;
      code = lead & 0x0Fu;
      smallest = 0x800;
    } else if ((lead & 0xF8u) == 0xF0u) {
      length = 4;
      code = lead & 0x07u;
      smallest = 0x10000;
    }
    bool valid = length > 0 && i + length <= n;
    for (size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      valid = (next & 0xC0u) == 0x80u;
      code = (code << 6) | (next & 0x3Fu);
    }
    if (valid && length > 1) {
      valid = code >= smallest && code <= 0x10FFFF && (code < 0xD800 || code > 0xDFFF);
    }
    if (valid) {
      out.append(text, i, length);
      i += length;
    } else {
      out += kReplacement;
      ++i;
    }
  }
  return out;
}

}  // namespace gleaner::store::pg
