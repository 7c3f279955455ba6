#include "store/sqlite_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <thread>

#include "observe/verdict_json.h"
#include "store/open_store.h"
#include "store/profiles_of_kind.h"
#include "store/row_codec.h"
#include "store/sqlite_schema.h"
#include "store/sqlite_statement.h"
#include "store/text_list.h"

namespace gleaner::store {
namespace {

using core::Status;
using sqlite::SqlError;
using sqlite::Statement;

// A store records who ran what, environments included: only its owner may
// read it. SQLite creates -wal and -shm with the database file's mode, so
// creating that file private is enough; files an older gleaner left
// readable are made private. Never through a link.
//
// An existing file is looked at only through an O_PATH descriptor. Closing
// any other descriptor of a file drops every POSIX lock this process holds
// on it, and SQLite's connections in this process (a daemon's sampler,
// API and scheduler each have one) hold theirs for as long as they are
// open: with them gone, another process (a report, or sqlite3) opening the
// store believes it is alone, and on closing it deletes the write-ahead
// log the daemon is still writing, whose later commits nobody else sees,
// and which a second writer could turn into a corrupt database.
Status MakePrivate(const std::string& path) {
  if (path.empty() || path == ":memory:" || path.starts_with("file:")) return Status::Ok();
  // New: created private, before any connection can hold a lock on it.
  const int created = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (created >= 0) {
    close(created);
    return Status::Ok();
  }
  if (errno != EEXIST) {
    return core::Unavailable("cannot open the database " + path + ": " + std::strerror(errno) +
                             " (check the data directory exists and is writable)");
  }
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const std::string file = path + suffix;
    const int fd = open(file.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT && *suffix != '\0') continue;
      return core::Unavailable("cannot open the database " + file + ": " + std::strerror(errno));
    }
    struct stat st {};
    const bool stated = fstat(fd, &st) == 0;
    if (stated && S_ISLNK(st.st_mode)) {
      close(fd);
      return core::Unavailable("cannot open the database " + file +
                               ": it is a symbolic link; remove it");
    }
    if (stated && !S_ISREG(st.st_mode)) {
      close(fd);
      return core::Unavailable("cannot open the database " + file + ": not a regular file");
    }
    if (stated && (st.st_mode & 077) != 0 && st.st_uid == geteuid()) {
      // The file this descriptor names, not whatever the path names now.
      chmod(("/proc/self/fd/" + std::to_string(fd)).c_str(), 0600);
    }
    close(fd);
  }
  return Status::Ok();
}

}  // namespace

core::Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path) {
  GLEANER_RETURN_IF_ERROR(MakePrivate(path));
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return core::Unavailable("cannot open the database " + path + ": " + why +
                             " (check the data directory exists and is writable)");
  }
  std::unique_ptr<SqliteStore> store(new SqliteStore(db));
  sqlite3_busy_timeout(db, 5000);
  // Switching to WAL and migrating need the database to themselves; when
  // another process opens it at the same moment (a client beside a
  // starting daemon), SQLite may answer "locked" without waiting. Retry a
  // while before giving up.
  core::Status s;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    s = path == ":memory:" ? core::Status::Ok() : store->Exec("PRAGMA journal_mode=WAL");
    if (s.ok()) s = store->Exec("PRAGMA synchronous=FULL");
    if (s.ok()) s = sqlite::MigrateSchema(db, sqlite::LatestSchemaVersion());
    const int code = sqlite3_errcode(db) & 0xff;
    if (s.ok() || (code != SQLITE_BUSY && code != SQLITE_LOCKED) ||
        std::chrono::steady_clock::now() > give_up) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  GLEANER_RETURN_IF_ERROR(s.WithContext("database " + path));
  return store;
}

core::Result<StoreProbe> ProbeSqliteStore(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    return core::NotFound(path + " does not exist yet: the first start of gleaner makes it");
  }
  if (!S_ISREG(st.st_mode)) return core::InvalidArgument(path + " is not a plain file (a link?)");
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> owned(db, &sqlite3_close);
  sqlite3_stmt* statement = nullptr;
  if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &statement, nullptr);
  std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> query(statement, &sqlite3_finalize);
  if (rc == SQLITE_OK) rc = sqlite3_step(statement);
  if (rc != SQLITE_ROW) {
    return core::Unavailable("cannot read " + path + ": " +
                             (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
  }
  StoreProbe probe;
  probe.schema_version = sqlite3_column_int64(statement, 0);
  probe.latest_version = sqlite::LatestSchemaVersion();
  return probe;
}

SqliteStore::~SqliteStore() { sqlite3_close(db_); }

Status SqliteStore::Exec(const char* sql) { return sqlite::Exec(db_, sql); }

Status SqliteStore::InTransaction(const std::function<Status()>& body) {
  // Every transaction here writes, and some read first (a minute to merge,
  // an array's live tasks). Taking the write lock up front makes another
  // connection's writer wait (busy_timeout); a read upgraded to a write
  // would instead fail at once with "database is locked".
  GLEANER_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  const Status s = body();
  if (!s.ok()) {
    Exec("ROLLBACK").IgnoreError();  // the body's error is the one to report
    return s;
  }
  return Exec("COMMIT");
}

Status SqliteStore::AddRollups(const std::vector<observe::MinuteRollup>& rollups) {
  if (rollups.empty()) return Status::Ok();
  return InTransaction([&] { return MergeRollups(rollups); });
}

core::Result<int64_t> SqliteStore::AddAgentMinutes(
    const std::vector<AgentMinutes>& batch,
    const std::map<std::string, std::string>& project_of_user) {
  std::vector<observe::MinuteRollup> fresh;
  if (std::all_of(batch.begin(), batch.end(), [](const auto& b) { return b.minutes.empty(); })) {
    return int64_t{0};
  }
  const Status done = InTransaction([&]() -> Status {
    Statement claim(db_,
                    "INSERT INTO minute_parts (uuid, minute_s, source) VALUES (?, ?, ?) "
                    "ON CONFLICT DO NOTHING");
    GLEANER_RETURN_IF_ERROR(claim.status());
    for (const auto& [source, minutes] : batch) {
      for (const observe::MinuteRollup& m : minutes) {
        if (!source.empty()) {
          claim.Bind(1, m.uuid.str());
          claim.Bind(2, core::ToUnixMicros(m.minute) / 1'000'000);
          claim.Bind(3, source);
          const bool stepped = claim.Step() == SQLITE_DONE;
          claim.Reset();
          if (!stepped) return SqlError(db_, "recording whose GPU minutes are stored");
          if (sqlite3_changes(db_) == 0) continue;  // sent before
        }
        fresh.push_back(m);
      }
    }
    GLEANER_RETURN_IF_ERROR(MergeRollups(fresh));
    observe::UsageProfiles delta(project_of_user);
    for (const observe::MinuteRollup& m : fresh) delta.Add(m);
    return AddProfileRows(delta);
  });
  if (!done.ok()) return done;
  return static_cast<int64_t>(fresh.size());
}

Status SqliteStore::MergeRollups(const std::vector<observe::MinuteRollup>& rollups) {
  {
    Statement insert(db_, (std::string("INSERT OR REPLACE INTO gpu_minutes (") + kRollupColumns +
                           ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
                              .c_str());
    Status s = insert.status();
    for (const observe::MinuteRollup& added : rollups) {
      if (!s.ok()) break;
      // A minute already stored (gleaner restarted within it) is merged, not
      // replaced, so the minute keeps both parts.
      auto existing = Rollups(added.uuid, added.minute, added.minute + core::Seconds(1));
      if (!existing.ok()) {
        s = existing.status();
        break;
      }
      const observe::MinuteRollup r =
          existing->empty() ? added : observe::MergeRollups(existing->front(), added);
      insert.Bind(1, r.uuid.str());
      insert.Bind(2, core::ToUnixMicros(r.minute) / 1'000'000);
      insert.Bind(3, static_cast<int64_t>(r.samples));
      insert.Bind(4, r.utilization_min_pct);
      insert.Bind(5, r.utilization_mean_pct);
      insert.Bind(6, r.utilization_max_pct);
      insert.BindOptional(
          7, r.memory_used_max
                 ? std::optional<int64_t>(static_cast<int64_t>(r.memory_used_max->count()))
                 : std::nullopt);
      insert.BindOptional(8, r.power_mean_w);
      insert.Bind(9, JoinList(r.pids));
      insert.Bind(10, JoinList(r.users));
      insert.Bind(11, std::string(observe::GpuStateName(r.state)));
      insert.Bind(12, core::ToSecondsDouble(r.observed));
      insert.Bind(13, core::ToSecondsDouble(r.busy));
      insert.Bind(14, core::ToSecondsDouble(r.idle));
      insert.Bind(15, core::ToSecondsDouble(r.held_idle));
      insert.Bind(16, core::ToSecondsDouble(r.harvested));
      insert.Bind(17, JoinList(r.job_users));
      if (insert.Step() != SQLITE_DONE) s = SqlError(db_, "saving GPU minutes");
      insert.Reset();
    }
    return s;
  }
}

core::Result<std::vector<observe::MinuteRollup>> SqliteStore::Rollups(const core::GpuUuid& uuid,
                                                                      core::TimePoint from,
                                                                      core::TimePoint to) {
  Statement q(db_, (std::string("SELECT ") + kRollupColumns +
                    " FROM gpu_minutes WHERE uuid = ? AND minute_s >= ? AND minute_s < ?"
                    " ORDER BY minute_s")
                       .c_str());
  GLEANER_RETURN_IF_ERROR(q.status());
  q.Bind(1, uuid.str());
  q.Bind(2, core::ToUnixMicros(from) / 1'000'000);
  q.Bind(3, core::ToUnixMicros(to) / 1'000'000);
  std::vector<observe::MinuteRollup> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.push_back(RollupFromRow(q));
  if (rc != SQLITE_DONE) return SqlError(db_, "reading GPU minutes");
  return out;
}

core::Result<std::vector<observe::MinuteRollup>> SqliteStore::RollupsBetween(core::TimePoint from,
                                                                             core::TimePoint to) {
  Statement q(db_, (std::string("SELECT ") + kRollupColumns +
                    " FROM gpu_minutes WHERE minute_s >= ? AND minute_s < ?"
                    " ORDER BY uuid, minute_s")
                       .c_str());
  GLEANER_RETURN_IF_ERROR(q.status());
  q.Bind(1, core::ToUnixMicros(from) / 1'000'000);
  q.Bind(2, core::ToUnixMicros(to) / 1'000'000);
  std::vector<observe::MinuteRollup> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.push_back(RollupFromRow(q));
  if (rc != SQLITE_DONE) return SqlError(db_, "reading GPU minutes");
  return out;
}

Status SqliteStore::SaveGpus(const std::vector<GpuRecord>& gpus) {
  if (gpus.empty()) return Status::Ok();
  return InTransaction([&]() -> Status {
    Statement upsert(db_, R"sql(
    INSERT INTO gpus VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (uuid) DO UPDATE SET host = excluded.host, idx = excluded.idx,
      name = excluded.name, memory_total_bytes = excluded.memory_total_bytes,
      last_seen_us = excluded.last_seen_us)sql");
    Status s = upsert.status();
    for (const GpuRecord& g : gpus) {
      if (!s.ok()) break;
      upsert.Bind(1, g.uuid.str());
      upsert.Bind(2, g.host);
      upsert.Bind(3, static_cast<int64_t>(g.index));
      upsert.Bind(4, g.name);
      upsert.BindOptional(
          5, g.memory_total ? std::optional<int64_t>(static_cast<int64_t>(g.memory_total->count()))
                            : std::nullopt);
      upsert.Bind(6, core::ToUnixMicros(g.first_seen));
      upsert.Bind(7, core::ToUnixMicros(g.last_seen));
      if (upsert.Step() != SQLITE_DONE) s = SqlError(db_, "saving GPUs");
      upsert.Reset();
    }
    return s;
  });
}

core::Result<std::vector<GpuRecord>> SqliteStore::Gpus() {
  Statement q(
      db_, (std::string("SELECT ") + kGpuColumns + " FROM gpus ORDER BY host, idx, uuid").c_str());
  GLEANER_RETURN_IF_ERROR(q.status());
  std::vector<GpuRecord> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.push_back(GpuFromRow(q));
  if (rc != SQLITE_DONE) return SqlError(db_, "reading GPUs");
  return out;
}

core::Result<int64_t> SqliteStore::ForgetGpus(const std::string& host) {
  Statement remove(db_, "DELETE FROM gpus WHERE host = ?");
  GLEANER_RETURN_IF_ERROR(remove.status());
  remove.Bind(1, host);
  if (remove.Step() != SQLITE_DONE) return SqlError(db_, "forgetting GPUs");
  return static_cast<int64_t>(sqlite3_changes(db_));
}

Status SqliteStore::SaveVerdicts(const std::vector<observe::Verdict>& verdicts) {
  if (verdicts.empty()) return Status::Ok();
  return InTransaction([&]() -> Status {
    Statement upsert(db_, "INSERT OR REPLACE INTO gpu_verdicts VALUES (?, ?)");
    Status s = upsert.status();
    for (const observe::Verdict& v : verdicts) {
      if (!s.ok()) break;
      upsert.Bind(1, v.uuid.str());
      upsert.Bind(2, observe::VerdictToJson(v).dump(-1, ' ', false,
                                                    nlohmann::json::error_handler_t::replace));
      if (upsert.Step() != SQLITE_DONE) s = SqlError(db_, "saving verdicts");
      upsert.Reset();
    }
    return s;
  });
}

core::Result<std::vector<observe::Verdict>> SqliteStore::LatestVerdicts() {
  Statement q(db_, "SELECT uuid, verdict FROM gpu_verdicts ORDER BY uuid");
  GLEANER_RETURN_IF_ERROR(q.status());
  std::vector<observe::Verdict> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    const std::string uuid = q.Text(0);
    auto parsed = nlohmann::json::parse(q.Text(1), nullptr, false);
    if (parsed.is_discarded()) return core::Internal("stored verdict of " + uuid + " is not JSON");
    GLEANER_ASSIGN_OR_RETURN(observe::Verdict v, observe::VerdictFromJson(parsed));
    out.push_back(std::move(v));
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "reading verdicts");
  return out;
}

Status SqliteStore::SavePauseModel(const std::string& host, const observe::QuietSpellModel& model) {
  Statement upsert(db_, "INSERT OR REPLACE INTO pause_models VALUES (?, ?)");
  GLEANER_RETURN_IF_ERROR(upsert.status());
  upsert.Bind(1, host);
  upsert.Bind(2, observe::PauseModelToJson(model).dump());
  if (upsert.Step() != SQLITE_DONE) return SqlError(db_, "saving the pause model");
  return Status::Ok();
}

core::Result<std::optional<observe::QuietSpellModel>> SqliteStore::PauseModel(
    const std::string& host) {
  Statement q(db_, "SELECT cells FROM pause_models WHERE host = ?");
  GLEANER_RETURN_IF_ERROR(q.status());
  q.Bind(1, host);
  const int rc = q.Step();
  if (rc == SQLITE_DONE) return std::optional<observe::QuietSpellModel>();
  if (rc != SQLITE_ROW) return SqlError(db_, "reading the pause model");
  return PauseModelFromRow(host, q.Text(0));
}

Status SqliteStore::AddToProfiles(const observe::UsageProfiles& delta) {
  return InTransaction([&] { return AddProfileRows(delta); });
}

Status SqliteStore::AddProfileRows(const observe::UsageProfiles& delta) {
  {
    Statement add(db_, R"sql(
    INSERT INTO usage_profiles VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (kind, key, hour_of_week)
    DO UPDATE SET busy_s = busy_s + excluded.busy_s, observed_s = observed_s + excluded.observed_s)sql");
    GLEANER_RETURN_IF_ERROR(add.status());
    return ForEachProfileRow(delta, [&](const ProfileRow& r) -> Status {
      add.Bind(1, r.kind);
      add.Bind(2, r.key);
      add.Bind(3, r.hour_of_week);
      add.Bind(4, r.busy_s);
      add.Bind(5, r.observed_s);
      const bool done = add.Step() == SQLITE_DONE;
      add.Reset();
      return done ? Status::Ok() : SqlError(db_, "saving usage profiles");
    });
  }
}

core::Result<std::map<std::string, observe::HourOfWeekProfile>> SqliteStore::ProfileRows(
    const std::string& kind) {
  Statement q(db_, R"sql(
    SELECT key, hour_of_week, busy_s, observed_s FROM usage_profiles WHERE kind = ?
    ORDER BY key, hour_of_week)sql");
  GLEANER_RETURN_IF_ERROR(q.status());
  q.Bind(1, kind);
  std::map<std::string, observe::HourOfWeekProfile> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    const auto h = static_cast<size_t>(q.Int(1));
    if (h >= static_cast<size_t>(observe::kHoursPerWeek)) continue;
    observe::HourOfWeekProfile& p = out[q.Text(0)];
    p.busy_s[h] = q.Real(2);
    p.observed_s[h] = q.Real(3);
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "reading usage profiles");
  return out;
}

core::Result<std::map<std::string, observe::HourOfWeekProfile>> SqliteStore::Profiles(
    const std::string& kind) {
  return ProfilesOfKind(kind, [this](const std::string& k) { return ProfileRows(k); });
}

core::Result<int64_t> SqliteStore::PruneRollups(core::TimePoint before) {
  Statement del(db_, "DELETE FROM gpu_minutes WHERE minute_s < ?");
  GLEANER_RETURN_IF_ERROR(del.status());
  del.Bind(1, core::ToUnixMicros(before) / 1'000'000);
  if (del.Step() != SQLITE_DONE) return SqlError(db_, "pruning GPU minutes");
  const auto pruned = static_cast<int64_t>(sqlite3_changes(db_));
  Statement parts(db_, "DELETE FROM minute_parts WHERE minute_s < ?");
  GLEANER_RETURN_IF_ERROR(parts.status());
  parts.Bind(1, core::ToUnixMicros(before) / 1'000'000);
  if (parts.Step() != SQLITE_DONE) return SqlError(db_, "pruning GPU minutes");
  return pruned;
}

}  // namespace gleaner::store
