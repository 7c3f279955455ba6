#include "store/gpu_claims.h"
#include "store/job_json.h"
#include "store/row_codec.h"
#include "store/sqlite_statement.h"
#include "store/sqlite_store.h"
#include "store/text_list.h"

namespace gleaner::store {

using core::Status;
using sqlite::SqlError;
using sqlite::Statement;

namespace {

// In JobFromRow's order.
constexpr const char* kJobColumns =
    "id, user, uid, spec, state, attempts, submitted_us, started_us, finished_us, gpus, "
    "exit_code, reason, pid, process_start_us, array_id, array_index";

// The states of a job that has not ended, as SQL.
constexpr const char* kActiveStates =
    "('pending_approval', 'queued', 'held', 'running', 'vacating')";

}  // namespace

core::Result<std::vector<JobRecord>> SqliteStore::SubmitAll(const std::vector<NewJob>& jobs,
                                                            core::TimePoint now) {
  std::vector<JobRecord> saved;
  const Status s = InTransaction([&]() -> Status {
    Statement insert(db_, R"sql(
      INSERT INTO jobs (user, uid, spec, state, submitted_us, array_id, array_index, project,
                        spec_bytes, reason)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
    GLEANER_RETURN_IF_ERROR(insert.status());
    Statement submitted(db_, R"sql(
      INSERT INTO events (at_us, kind, job_id, user, actor, gpus, detail)
      VALUES (?, 'submitted', ?, ?, ?, '', ?))sql");
    GLEANER_RETURN_IF_ERROR(submitted.status());
    for (const NewJob& job : jobs) {
      const std::string spec = StoredSpecText(job.spec);
      const std::string detail = SubmittedDetail(job);
      std::optional<sched::JobId> array_id;
      for (int64_t task = 0; task < TaskCount(job.spec); ++task) {
        JobRecord r = NewRecord(job, task, now);
        r.array_id = array_id;
        insert.Bind(1, r.user);
        insert.Bind(2, static_cast<int64_t>(r.uid));
        insert.Bind(3, spec);
        insert.Bind(4, std::string(JobStateName(r.state)));
        insert.Bind(5, core::ToUnixMicros(now));
        insert.BindOptional(6, r.array_id);
        insert.Bind(7, r.array_index);
        insert.Bind(8, job.spec.project);
        insert.Bind(9, static_cast<int64_t>(spec.size()));
        insert.Bind(10, r.reason);
        if (insert.Step() != SQLITE_DONE) return SqlError(db_, "saving the job");
        insert.Reset();
        r.id = sqlite3_last_insert_rowid(db_);
        submitted.Bind(1, core::ToUnixMicros(now));
        submitted.Bind(2, r.id);
        submitted.Bind(3, r.user);
        submitted.Bind(4, r.user);
        submitted.Bind(5, detail);
        if (submitted.Step() != SQLITE_DONE) return SqlError(db_, "recording the submit");
        submitted.Reset();
        if (job.spec.array && !array_id) {
          // The array is named by its first task, whose id is known only now.
          array_id = r.array_id = r.id;
          Statement name(db_, "UPDATE jobs SET array_id = id WHERE id = ?");
          GLEANER_RETURN_IF_ERROR(name.status());
          name.Bind(1, r.id);
          if (name.Step() != SQLITE_DONE) return SqlError(db_, "naming the array");
        }
        saved.push_back(std::move(r));
      }
    }
    return Status::Ok();
  });
  // With synchronous=FULL the commit is on disk when it returns.
  GLEANER_RETURN_IF_ERROR(s);
  return saved;
}

core::Result<JobRecord> SqliteStore::Get(sched::JobId id) {
  Statement q(db_, (std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ?").c_str());
  GLEANER_RETURN_IF_ERROR(q.status());
  q.Bind(1, static_cast<int64_t>(id));
  const int rc = q.Step();
  if (rc == SQLITE_DONE) return core::NotFound("no job " + std::to_string(id));
  if (rc != SQLITE_ROW) return SqlError(db_, "reading job " + std::to_string(id));
  return JobFromRow(q);
}

core::Result<std::map<sched::JobId, JobState>> SqliteStore::StatesOf(
    const std::set<sched::JobId>& ids) {
  if (ids.empty()) return std::map<sched::JobId, JobState>{};
  std::string list = "[";
  for (sched::JobId id : ids) list += (list.size() > 1 ? "," : "") + std::to_string(id);
  list += "]";
  // An array's tasks come after its first, whose id names it: the range
  // keeps the read to the primary key from the oldest id asked.
  Statement q(db_, R"sql(
    SELECT id, state, array_id FROM jobs WHERE id >= ?
      AND (id IN (SELECT value FROM json_each(?)) OR array_id IN (SELECT value FROM json_each(?))))sql");
  GLEANER_RETURN_IF_ERROR(q.status());
  q.Bind(1, *ids.begin());
  q.Bind(2, list);
  q.Bind(3, list);
  DependencyStates states(ids);
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    if (auto state = ParseJobState(q.Text(1))) {
      states.Add(static_cast<sched::JobId>(q.Int(0)),
                 q.Null(2) ? std::nullopt : std::optional<sched::JobId>(q.Int(2)), *state);
    }
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "reading jobs' states");
  return states.Take();
}

core::Result<std::vector<JobRecord>> SqliteStore::Find(const JobQuery& query) {
  // The SQL carries placeholders only, never a value.
  std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id > ?";
  if (!query.states.empty()) {
    sql += " AND state IN (";
    for (size_t i = 0; i < query.states.size(); ++i) sql += i == 0 ? "?" : ", ?";
    sql += ")";
  }
  if (!query.user.empty()) sql += " AND user = ?";
  sql += " ORDER BY id";
  if (query.limit > 0) sql += " LIMIT ?";
  Statement q(db_, sql.c_str());
  GLEANER_RETURN_IF_ERROR(q.status());
  int param = 1;
  q.Bind(param++, static_cast<int64_t>(query.after));
  for (JobState state : query.states) q.Bind(param++, std::string(JobStateName(state)));
  if (!query.user.empty()) q.Bind(param++, query.user);
  if (query.limit > 0) q.Bind(param++, query.limit);
  std::vector<JobRecord> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    GLEANER_ASSIGN_OR_RETURN(JobRecord r, JobFromRow(q));
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "listing jobs");
  return out;
}

core::Result<std::map<JobState, int64_t>> SqliteStore::CountByState() {
  Statement q(db_, "SELECT state, COUNT(*) FROM jobs GROUP BY state");
  GLEANER_RETURN_IF_ERROR(q.status());
  std::map<JobState, int64_t> counts;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    const std::optional<JobState> state = ParseJobState(q.Text(0));
    if (!state) return core::Internal("a stored job has an unknown state: " + q.Text(0));
    counts[*state] = q.Int(1);
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "counting jobs");
  return counts;
}

namespace {

// What the active jobs whose `column` is `key` hold, at most `at_most` of
// them (0: all); `whose` names them in an error.
template <typename Key>
core::Result<ActiveUsage> UsageWhere(sqlite3* db, const char* column, const Key& key,
                                     int64_t at_most, const char* whose) {
  Statement q(db, (std::string("SELECT COUNT(*), COALESCE(SUM(spec_bytes), 0) FROM (SELECT "
                               "spec_bytes FROM jobs WHERE ") +
                   column + " = ? AND state IN " + kActiveStates + " LIMIT ?)")
                      .c_str());
  GLEANER_RETURN_IF_ERROR(q.status());
  q.Bind(1, key);
  q.Bind(2, at_most > 0 ? at_most : int64_t{-1});  // SQLite reads LIMIT -1 as none
  if (q.Step() != SQLITE_ROW) return SqlError(db, std::string("adding up ") + whose + " jobs");
  return ActiveUsage{q.Int(0), q.Int(1)};
}

}  // namespace

core::Result<ActiveUsage> SqliteStore::UsageOfUser(uint32_t uid, int64_t at_most) {
  return UsageWhere(db_, "uid", static_cast<int64_t>(uid), at_most, "a user's");
}

core::Result<ActiveUsage> SqliteStore::UsageOfProject(const std::string& project, int64_t at_most) {
  return UsageWhere(db_, "project", project, at_most, "a project's");
}

core::Result<JobRecord> SqliteStore::Transition(sched::JobId id, JobState from, JobState to,
                                                const JobUpdate& u) {
  if (!CanTransition(from, to)) {
    return core::FailedPrecondition("job " + std::to_string(id) + " cannot go from " +
                                    std::string(JobStateName(from)) + " to " +
                                    std::string(JobStateName(to)));
  }
  // The move and its GPU claims commit together: a start that finds one of
  // its GPUs taken leaves the job where it was.
  const Status s = InTransaction([&]() -> Status {
    GLEANER_RETURN_IF_ERROR(CompareAndSet(id, from, to, u));
    const std::optional<std::vector<core::GpuUuid>> claims = ClaimsAfter(from, to, u);
    if (claims) GLEANER_RETURN_IF_ERROR(ClaimGpus(id, from, *claims));
    return RecordMove(id, from, to, u);
  });
  GLEANER_RETURN_IF_ERROR(s);
  return Get(id);
}

Status SqliteStore::CompareAndSet(sched::JobId id, JobState from, JobState to, const JobUpdate& u) {
  // A new attempt (queued again, or started) does not keep the last one's
  // process: a pid of an attempt that ended would name a stranger's.
  Statement update(db_, R"sql(
    UPDATE jobs SET state = ?1, attempts = attempts + ?2,
      gpus = COALESCE(?3, gpus), started_us = COALESCE(?4, started_us),
      finished_us = COALESCE(?5, finished_us), exit_code = COALESCE(?6, exit_code), reason = ?7,
      pid = COALESCE(?8, CASE WHEN ?12 = 1 THEN NULL ELSE pid END),
      process_start_us = COALESCE(?9, CASE WHEN ?12 = 1 THEN NULL ELSE process_start_us END)
    WHERE id = ?10 AND state = ?11)sql");
  GLEANER_RETURN_IF_ERROR(update.status());
  update.Bind(1, std::string(JobStateName(to)));
  update.Bind(2, static_cast<int64_t>(to == JobState::kRunning ? 1 : 0));
  const auto micros = [](const std::optional<core::TimePoint>& t) {
    return t ? std::optional<int64_t>(core::ToUnixMicros(*t)) : std::nullopt;
  };
  const auto wide = [](const std::optional<int>& v) {
    return v ? std::optional<int64_t>(*v) : std::nullopt;
  };
  std::optional<std::string> gpus;
  if (u.gpus) gpus = GpuListText(*u.gpus);
  update.BindOptional(3, gpus);
  update.BindOptional(4, micros(u.started_at));
  update.BindOptional(5, micros(u.finished_at));
  update.BindOptional(6, wide(u.exit_code));
  update.Bind(7, u.reason);
  update.BindOptional(8, wide(u.pid));
  update.BindOptional(9, micros(u.process_started_at));
  update.Bind(10, static_cast<int64_t>(id));
  update.Bind(11, std::string(JobStateName(from)));
  update.Bind(12,
              static_cast<int64_t>(to == JobState::kQueued || to == JobState::kRunning ? 1 : 0));
  if (update.Step() != SQLITE_DONE) return SqlError(db_, "updating job " + std::to_string(id));
  if (sqlite3_changes(db_) != 1) {
    GLEANER_ASSIGN_OR_RETURN(JobRecord now, Get(id));  // NotFound for an unknown id
    return core::FailedPrecondition("job " + std::to_string(id) + " is " +
                                    std::string(JobStateName(now.state)) + ", not " +
                                    std::string(JobStateName(from)));
  }
  return Status::Ok();
}

Status SqliteStore::ClaimGpus(sched::JobId id, JobState from,
                              const std::vector<core::GpuUuid>& gpus) {
  Statement release(db_, "DELETE FROM gpu_claims WHERE job_id = ?");
  GLEANER_RETURN_IF_ERROR(release.status());
  release.Bind(1, static_cast<int64_t>(id));
  if (release.Step() != SQLITE_DONE) {
    return SqlError(db_, "releasing the GPUs of job " + std::to_string(id));
  }
  // On a conflict the update changes nothing and returns the holder: one
  // statement claims the GPU or says who has it.
  Statement claim(db_, R"sql(
    INSERT INTO gpu_claims (gpu, job_id) VALUES (?, ?)
    ON CONFLICT (gpu) DO UPDATE SET job_id = gpu_claims.job_id RETURNING job_id)sql");
  GLEANER_RETURN_IF_ERROR(claim.status());
  for (const core::GpuUuid& gpu : gpus) {
    claim.Bind(1, gpu.str());
    claim.Bind(2, static_cast<int64_t>(id));
    if (claim.Step() != SQLITE_ROW) return SqlError(db_, "claiming GPU " + gpu.str());
    const sched::JobId holder = claim.Int(0);
    claim.Reset();
    if (holder != id) return GpuTaken(id, from, gpu.str(), holder);
  }
  return Status::Ok();
}

core::Status SqliteStore::Annotate(const std::vector<std::pair<sched::JobId, std::string>>& reasons,
                                   JobState state) {
  if (reasons.empty()) return Status::Ok();
  return InTransaction([&]() -> Status {
    Statement update(db_, "UPDATE jobs SET reason = ? WHERE id = ? AND state = ?");
    GLEANER_RETURN_IF_ERROR(update.status());
    for (const auto& [id, reason] : reasons) {
      update.Bind(1, reason);
      update.Bind(2, static_cast<int64_t>(id));
      update.Bind(3, std::string(JobStateName(state)));
      if (update.Step() != SQLITE_DONE) {
        return SqlError(db_, "annotating job " + std::to_string(id));
      }
      update.Reset();
    }
    return Status::Ok();
  });
}

core::Result<std::vector<sched::JobId>> SqliteStore::CancelArray(sched::JobId array_id,
                                                                 const std::string& reason,
                                                                 const std::string& actor) {
  std::vector<sched::JobId> cancelled;
  const Status s = InTransaction([&]() -> Status {
    Statement live(db_, (std::string("SELECT id FROM jobs WHERE array_id = ? AND state IN ") +
                         kActiveStates + " ORDER BY id")
                            .c_str());
    GLEANER_RETURN_IF_ERROR(live.status());
    live.Bind(1, static_cast<int64_t>(array_id));
    int rc;
    while ((rc = live.Step()) == SQLITE_ROW) cancelled.push_back(live.Int(0));
    if (rc != SQLITE_DONE) return SqlError(db_, "listing array " + std::to_string(array_id));
    Statement release(db_, R"sql(
      DELETE FROM gpu_claims WHERE job_id IN
        (SELECT id FROM jobs WHERE array_id = ? AND state IN ('running', 'vacating')))sql");
    GLEANER_RETURN_IF_ERROR(release.status());
    release.Bind(1, static_cast<int64_t>(array_id));
    if (release.Step() != SQLITE_DONE) {
      return SqlError(db_, "releasing the GPUs of array " + std::to_string(array_id));
    }
    const std::string history_sql = std::string(R"sql(
      INSERT INTO events (at_us, kind, job_id, user, actor, gpus, detail)
      SELECT ?, 'cancelled', id, user, ?, gpus, ? FROM jobs
      WHERE array_id = ? AND state IN )sql") +
                                    kActiveStates + " ORDER BY id";
    Statement history(db_, history_sql.c_str());
    GLEANER_RETURN_IF_ERROR(history.status());
    history.Bind(1, core::ToUnixMicros(core::RealClock().Now()));
    history.Bind(2, actor.empty() ? std::string("gleaner") : actor);
    history.Bind(3, reason);
    history.Bind(4, static_cast<int64_t>(array_id));
    if (history.Step() != SQLITE_DONE) {
      return SqlError(db_, "recording the history of array " + std::to_string(array_id));
    }
    Statement update(db_, (std::string("UPDATE jobs SET state = 'cancelled', reason = ? WHERE "
                                       "array_id = ? AND state IN ") +
                           kActiveStates)
                              .c_str());
    GLEANER_RETURN_IF_ERROR(update.status());
    update.Bind(1, reason);
    update.Bind(2, static_cast<int64_t>(array_id));
    if (update.Step() != SQLITE_DONE) {
      return SqlError(db_, "cancelling array " + std::to_string(array_id));
    }
    return Status::Ok();
  });
  GLEANER_RETURN_IF_ERROR(s);
  return cancelled;
}

core::Status SqliteStore::RecordProcess(sched::JobId id, int pid, core::TimePoint started_at) {
  Statement update(db_, R"sql(
    UPDATE jobs SET pid = ?, process_start_us = ? WHERE id = ? AND state = 'running')sql");
  GLEANER_RETURN_IF_ERROR(update.status());
  update.Bind(1, static_cast<int64_t>(pid));
  update.Bind(2, core::ToUnixMicros(started_at));
  update.Bind(3, static_cast<int64_t>(id));
  if (update.Step() != SQLITE_DONE) return SqlError(db_, "recording job " + std::to_string(id));
  if (sqlite3_changes(db_) != 1) {
    return core::FailedPrecondition("job " + std::to_string(id) + " is not running");
  }
  return Status::Ok();
}

}  // namespace gleaner::store
