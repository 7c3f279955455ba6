#include "store/sqlite_schema.h"

#include <iterator>
#include <string>

#include "store/sqlite_statement.h"

namespace gleaner::store::sqlite {
namespace {

// Each entry moves the schema one version up. Never edit a shipped entry:
// add a new one.
constexpr const char* kMigrations[] = {
    R"sql(
    CREATE TABLE gpu_minutes (
      uuid TEXT NOT NULL,
      minute_s INTEGER NOT NULL,
      samples INTEGER NOT NULL,
      utilization_min_pct REAL NOT NULL,
      utilization_mean_pct REAL NOT NULL,
      utilization_max_pct REAL NOT NULL,
      memory_used_max_bytes INTEGER,
      power_mean_w REAL,
      pids TEXT NOT NULL,
      users TEXT NOT NULL,
      state TEXT NOT NULL,
      observed_s REAL NOT NULL,
      busy_s REAL NOT NULL,
      idle_s REAL NOT NULL,
      PRIMARY KEY (uuid, minute_s)
    );
    CREATE TABLE gpu_verdicts (
      uuid TEXT PRIMARY KEY,
      verdict TEXT NOT NULL
    );
    CREATE TABLE usage_profiles (
      kind TEXT NOT NULL,
      key TEXT NOT NULL,
      hour_of_week INTEGER NOT NULL,
      busy_s REAL NOT NULL,
      observed_s REAL NOT NULL,
      PRIMARY KEY (kind, key, hour_of_week)
    );
    )sql",
    R"sql(
    CREATE TABLE jobs (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      user TEXT NOT NULL,
      uid INTEGER NOT NULL,
      spec TEXT NOT NULL,
      state TEXT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      submitted_us INTEGER NOT NULL,
      started_us INTEGER,
      finished_us INTEGER,
      gpus TEXT NOT NULL DEFAULT '',
      exit_code INTEGER,
      reason TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX jobs_by_state ON jobs (state, id);
    )sql",
    R"sql(
    ALTER TABLE jobs ADD COLUMN pid INTEGER;
    ALTER TABLE jobs ADD COLUMN process_start_us INTEGER;
    )sql",
    R"sql(
    CREATE TABLE api_tokens (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      user TEXT NOT NULL,
      uid INTEGER NOT NULL,
      name TEXT NOT NULL,
      sha256 TEXT NOT NULL UNIQUE,
      created_us INTEGER NOT NULL,
      revoked_us INTEGER
    );
    ALTER TABLE jobs ADD COLUMN array_id INTEGER;
    ALTER TABLE jobs ADD COLUMN array_index INTEGER;
    )sql",
    // Minutes before this version count held-idle and harvested time only
    // as busy, and their job users among the owners.
    R"sql(
    ALTER TABLE gpu_minutes ADD COLUMN held_idle_s REAL NOT NULL DEFAULT 0;
    ALTER TABLE gpu_minutes ADD COLUMN harvested_s REAL NOT NULL DEFAULT 0;
    ALTER TABLE gpu_minutes ADD COLUMN job_users TEXT NOT NULL DEFAULT '';
    CREATE INDEX gpu_minutes_by_minute ON gpu_minutes (minute_s);
    CREATE TABLE gpus (
      uuid TEXT PRIMARY KEY,
      host TEXT NOT NULL,
      idx INTEGER NOT NULL,
      name TEXT NOT NULL,
      memory_total_bytes INTEGER,
      first_seen_us INTEGER NOT NULL,
      last_seen_us INTEGER NOT NULL
    );
    )sql",
    // Which job holds each GPU, one row per GPU of a running or vacating
    // job: the primary key is what stops the database from ever giving a
    // GPU to two jobs. Jobs take whole GPUs (fractional gpu_milli exists
    // only in the simulator), so a GPU has at most one holder. Jobs already
    // holding GPUs claim them here; where an earlier bug gave a GPU to two
    // jobs, the lower job id keeps it, rather than the upgrade failing.
    R"sql(
    CREATE TABLE gpu_claims (
      gpu TEXT PRIMARY KEY,
      job_id INTEGER NOT NULL
    );
    CREATE INDEX gpu_claims_by_job ON gpu_claims (job_id);
    WITH RECURSIVE split (job_id, gpu, rest) AS (
      SELECT id, '', gpus || ',' FROM jobs WHERE state IN ('running', 'vacating')
      UNION ALL
      SELECT job_id, substr(rest, 1, instr(rest, ',') - 1), substr(rest, instr(rest, ',') + 1)
      FROM split WHERE rest <> ''
    )
    INSERT OR IGNORE INTO gpu_claims (gpu, job_id)
    SELECT gpu, job_id FROM split WHERE gpu <> '' ORDER BY job_id;
    )sql",
    // Tokens expire; those made before never do.
    R"sql(
    ALTER TABLE api_tokens ADD COLUMN expires_us INTEGER;
    )sql",
    // What each user's and project's jobs hold, for the limits checked at
    // submit: the project and the stored spec's size, from an index
    // rather than by reading every spec.
    R"sql(
    ALTER TABLE jobs ADD COLUMN project TEXT NOT NULL DEFAULT '';
    ALTER TABLE jobs ADD COLUMN spec_bytes INTEGER NOT NULL DEFAULT 0;
    UPDATE jobs SET project = COALESCE(json_extract(spec, '$.project'), ''),
                    spec_bytes = length(CAST(spec AS BLOB));
    CREATE INDEX jobs_by_uid ON jobs (uid, state, spec_bytes);
    CREATE INDEX jobs_by_project ON jobs (project, state, spec_bytes);
    )sql",
    // One-time join tokens, and how many times each host has joined with
    // one: a credential carries its host's generation, so a new join
    // cuts off the credential before it.
    R"sql(
    CREATE TABLE agent_join_tokens (
      sha256 TEXT PRIMARY KEY,
      host TEXT NOT NULL,
      replace_joined INTEGER NOT NULL,
      created_us INTEGER NOT NULL,
      expires_us INTEGER NOT NULL,
      used_us INTEGER
    );
    CREATE TABLE agent_hosts (
      name TEXT PRIMARY KEY,
      generation INTEGER NOT NULL,
      joined_us INTEGER NOT NULL
    );
    )sql",
    // The append-only history (event_store.h), read by job, by user and by
    // time; tokens' scopes (NULL: every scope, as before scopes) and the
    // projects they are limited to; the policy's versions.
    R"sql(
    CREATE TABLE events (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      at_us INTEGER NOT NULL,
      kind TEXT NOT NULL,
      job_id INTEGER,
      user TEXT NOT NULL,
      actor TEXT NOT NULL,
      gpus TEXT NOT NULL,
      detail TEXT NOT NULL
    );
    CREATE INDEX events_by_job ON events (job_id, id);
    CREATE INDEX events_by_user ON events (user, id);
    CREATE INDEX events_by_time ON events (at_us);
    ALTER TABLE api_tokens ADD COLUMN scopes TEXT;
    ALTER TABLE api_tokens ADD COLUMN projects TEXT NOT NULL DEFAULT '';
    CREATE TABLE policies (
      version INTEGER PRIMARY KEY AUTOINCREMENT,
      at_us INTEGER NOT NULL,
      author TEXT NOT NULL,
      note TEXT NOT NULL,
      text TEXT NOT NULL
    );
    )sql",
    // Which agent run's part each GPU minute holds (AddAgentMinutes), so
    // that a report sent again adds none twice.
    R"sql(
    CREATE TABLE minute_parts (
      uuid TEXT NOT NULL,
      minute_s INTEGER NOT NULL,
      source TEXT NOT NULL,
      PRIMARY KEY (uuid, minute_s, source)
    );
    )sql",
    // What each host's idle classifier learned about pauses.
    R"sql(
    CREATE TABLE pause_models (
      host TEXT PRIMARY KEY,
      cells TEXT NOT NULL
    );
    )sql",
};

// Reads the version inside the caller's transaction.
Status ReadVersion(sqlite3* db, int64_t& version) {
  Statement q(db, "PRAGMA user_version");
  GLEANER_RETURN_IF_ERROR(q.status());
  if (q.Step() != SQLITE_ROW) return SqlError(db, "reading the schema version");
  version = q.Int(0);
  return Status::Ok();
}

// One step towards `target`, or none when the schema is there. `done`
// says which.
Status MigrateOneStep(sqlite3* db, int64_t target, bool& done) {
  int64_t current = 0;
  GLEANER_RETURN_IF_ERROR(ReadVersion(db, current));
  if (current > LatestSchemaVersion()) {
    return core::FailedPrecondition("the database has schema version " + std::to_string(current) +
                                    ", newer than this gleaner understands (" +
                                    std::to_string(LatestSchemaVersion()) + "); upgrade gleaner");
  }
  if (current >= target) {
    done = true;
    return Status::Ok();
  }
  const Status s = Exec(db, kMigrations[current]);
  return (s.ok() ? Exec(db, ("PRAGMA user_version=" + std::to_string(current + 1)).c_str()) : s)
      .WithContext("migrating the schema to version " + std::to_string(current + 1));
}

}  // namespace

int64_t LatestSchemaVersion() { return static_cast<int64_t>(std::size(kMigrations)); }

Status MigrateSchema(sqlite3* db, int64_t target) {
  // One step per transaction, the version read inside it: of two
  // processes opening a new database at once, the second finds the first's
  // steps done instead of repeating them.
  for (bool done = false; !done;) {
    GLEANER_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
    const Status s = MigrateOneStep(db, target, done);
    if (!s.ok() || done) {
      // Nothing was written, or the step's own error is the one to report.
      Exec(db, "ROLLBACK").IgnoreError();
      GLEANER_RETURN_IF_ERROR(s);
    } else {
      GLEANER_RETURN_IF_ERROR(Exec(db, "COMMIT"));
    }
  }
  return Status::Ok();
}

}  // namespace gleaner::store::sqlite
