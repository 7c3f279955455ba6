#include <algorithm>

#include "store/gpu_claims.h"
#include "store/job_json.h"
#include "store/pg_connection.h"
#include "store/pg_store.h"
#include "store/row_codec.h"
#include "store/text_list.h"

namespace gleaner::store {

using core::Status;
using pg::Param;
using pg::Row;
using pg::Rows;

namespace {

// In JobFromRow's order.
constexpr const char* kJobColumns =
    "id, user_name, uid, spec, state, attempts, submitted_us, started_us, finished_us, gpus, "
    "exit_code, reason, pid, process_start_us, array_id, array_index";

// The states of a job that has not ended, as SQL.
constexpr const char* kActiveStates =
    "('pending_approval', 'queued', 'held', 'running', 'vacating')";

std::optional<int64_t> Micros(const std::optional<core::TimePoint>& t) {
  return t ? std::optional<int64_t>(core::ToUnixMicros(*t)) : std::nullopt;
}

std::optional<int64_t> Wide(const std::optional<int>& v) {
  return v ? std::optional<int64_t>(*v) : std::nullopt;
}

}  // namespace

core::Result<std::vector<JobRecord>> PgStore::SubmitAll(const std::vector<NewJob>& jobs,
                                                        core::TimePoint now) {
  std::vector<JobRecord> saved;
  const Status s = db_->InTransaction([&]() -> Status {
    for (const NewJob& job : jobs) {
      const std::string spec = StoredSpecText(job.spec);
      const std::string detail = SubmittedDetail(job);
      std::optional<sched::JobId> array_id;
      for (int64_t task = 0; task < TaskCount(job.spec); ++task) {
        JobRecord r = NewRecord(job, task, now);
        r.array_id = array_id;
        // The job and its first event, in one statement.
        GLEANER_ASSIGN_OR_RETURN(
            Rows inserted, db_->Query(R"sql(
              WITH job AS (
                INSERT INTO jobs (user_name, uid, spec, state, submitted_us, array_id, array_index,
                                  project, spec_bytes, reason)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id),
              submitted AS (
                INSERT INTO events (at_us, kind, job_id, user_name, actor, gpus, detail)
                SELECT $5::BIGINT, 'submitted', id, $1::TEXT, $1::TEXT, '', $11::TEXT FROM job)
              SELECT id FROM job)sql",
                                      {r.user, static_cast<int64_t>(r.uid), spec,
                                       std::string(JobStateName(r.state)), core::ToUnixMicros(now),
                                       r.array_id, r.array_index, job.spec.project,
                                       static_cast<int64_t>(spec.size()), r.reason, detail},
                                      "saving the job"));
        r.id = inserted.Int(0, 0);
        if (job.spec.array && !array_id) {
          // The array is named by its first task, whose id is known only now.
          array_id = r.array_id = r.id;
          GLEANER_RETURN_IF_ERROR(
              db_->Query("UPDATE jobs SET array_id = id WHERE id = $1", {r.id}, "naming the array")
                  .status());
        }
        saved.push_back(std::move(r));
      }
    }
    return Status::Ok();
  });
  // InTransaction returns once COMMIT has: the jobs are on the server's disk.
  GLEANER_RETURN_IF_ERROR(s);
  return saved;
}

core::Result<JobRecord> PgStore::Get(sched::JobId id) {
  GLEANER_ASSIGN_OR_RETURN(
      Rows rows,
      db_->Query((std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = $1").c_str(), {id},
                 "reading job " + std::to_string(id)));
  if (rows.empty()) return core::NotFound("no job " + std::to_string(id));
  return JobFromRow(Row(rows, 0));
}

core::Result<std::map<sched::JobId, JobState>> PgStore::StatesOf(
    const std::set<sched::JobId>& ids) {
  if (ids.empty()) return std::map<sched::JobId, JobState>{};
  std::string list = "{";
  for (sched::JobId id : ids) list += (list.size() > 1 ? "," : "") + std::to_string(id);
  list += "}";
  // An array's tasks come after its first, whose id names it: the range
  // keeps the read to the primary key from the oldest id asked.
  GLEANER_ASSIGN_OR_RETURN(
      Rows rows, db_->Query("SELECT id, state, array_id FROM jobs WHERE id >= $2 AND "
                            "(id = ANY($1::BIGINT[]) OR array_id = ANY($1::BIGINT[]))",
                            {list, static_cast<int64_t>(*ids.begin())}, "reading jobs' states"));
  DependencyStates states(ids);
  for (int i = 0; i < rows.size(); ++i) {
    if (auto state = ParseJobState(rows.Text(i, 1))) {
      states.Add(static_cast<sched::JobId>(rows.Int(i, 0)),
                 rows.Null(i, 2) ? std::nullopt : std::optional<sched::JobId>(rows.Int(i, 2)),
                 *state);
    }
  }
  return states.Take();
}

core::Result<std::vector<JobRecord>> PgStore::Find(const JobQuery& query) {
  // The SQL carries placeholders only, never a value.
  std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id > $1";
  std::vector<Param> params{static_cast<int64_t>(query.after)};
  const auto next = [&] { return "$" + std::to_string(params.size()); };
  for (size_t i = 0; i < query.states.size(); ++i) {
    params.emplace_back(std::string(JobStateName(query.states[i])));
    sql += (i == 0 ? " AND state IN (" : ", ") + next();
  }
  if (!query.states.empty()) sql += ")";
  if (!query.user.empty()) {
    params.emplace_back(query.user);
    sql += " AND user_name = " + next();
  }
  sql += " ORDER BY id";
  if (query.limit > 0) {
    params.emplace_back(query.limit);
    sql += " LIMIT " + next();
  }
  GLEANER_ASSIGN_OR_RETURN(Rows rows, db_->Query(sql.c_str(), params, "listing jobs"));
  std::vector<JobRecord> out;
  out.reserve(static_cast<size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) {
    GLEANER_ASSIGN_OR_RETURN(JobRecord r, JobFromRow(Row(rows, i)));
    out.push_back(std::move(r));
  }
  return out;
}

core::Result<std::map<JobState, int64_t>> PgStore::CountByState() {
  GLEANER_ASSIGN_OR_RETURN(Rows rows, db_->Query("SELECT state, COUNT(*) FROM jobs GROUP BY state",
                                                 {}, "counting jobs"));
  std::map<JobState, int64_t> counts;
  for (int i = 0; i < rows.size(); ++i) {
    const std::optional<JobState> state = ParseJobState(rows.Text(i, 0));
    if (!state) return core::Internal("a stored job has an unknown state: " + rows.Text(i, 0));
    counts[*state] = rows.Int(i, 1);
  }
  return counts;
}

namespace {

// What the active jobs whose `column` is $1 hold, at most $2's worth (NULL:
// all, as PostgreSQL reads LIMIT).
std::string UsageSql(const char* column) {
  return std::string(
             "SELECT COUNT(*), COALESCE(SUM(spec_bytes), 0) FROM (SELECT spec_bytes "
             "FROM jobs WHERE ") +
         column + " = $1 AND state IN " + kActiveStates + " LIMIT $2) AS active";
}

Param Limit(int64_t at_most) { return at_most > 0 ? Param(at_most) : Param(std::nullopt); }

}  // namespace

core::Result<ActiveUsage> PgStore::UsageOfUser(uint32_t uid, int64_t at_most) {
  GLEANER_ASSIGN_OR_RETURN(
      Rows rows, db_->Query(UsageSql("uid").c_str(), {static_cast<int64_t>(uid), Limit(at_most)},
                            "adding up a user's jobs"));
  return ActiveUsage{rows.Int(0, 0), rows.Int(0, 1)};
}

core::Result<ActiveUsage> PgStore::UsageOfProject(const std::string& project, int64_t at_most) {
  GLEANER_ASSIGN_OR_RETURN(Rows rows,
                           db_->Query(UsageSql("project").c_str(), {project, Limit(at_most)},
                                      "adding up a project's jobs"));
  return ActiveUsage{rows.Int(0, 0), rows.Int(0, 1)};
}

core::Result<JobRecord> PgStore::Transition(sched::JobId id, JobState from, JobState to,
                                            const JobUpdate& u) {
  if (!CanTransition(from, to)) {
    return core::FailedPrecondition("job " + std::to_string(id) + " cannot go from " +
                                    std::string(JobStateName(from)) + " to " +
                                    std::string(JobStateName(to)));
  }
  // The move and its GPU claims commit together: a start that finds one of
  // its GPUs taken leaves the job where it was.
  std::optional<JobRecord> moved;
  const Status s = db_->InTransaction([&]() -> Status {
    GLEANER_ASSIGN_OR_RETURN(moved, CompareAndSet(id, from, to, u));
    const std::optional<std::vector<core::GpuUuid>> claims = ClaimsAfter(from, to, u);
    if (claims) GLEANER_RETURN_IF_ERROR(ClaimGpus(id, from, *claims));
    return RecordMove(id, from, to, u);
  });
  GLEANER_RETURN_IF_ERROR(s);
  return std::move(moved).value();
}

core::Result<JobRecord> PgStore::CompareAndSet(sched::JobId id, JobState from, JobState to,
                                               const JobUpdate& u) {
  std::optional<std::string> gpus;
  if (u.gpus) gpus = GpuListText(*u.gpus);
  // The state in the WHERE clause is the compare of compare-and-set: of two
  // connections moving the job at once, the second waits for the first's
  // row lock, finds the state changed, and updates nothing.
  GLEANER_ASSIGN_OR_RETURN(
      Rows updated,
      db_->Query((std::string(R"sql(
        UPDATE jobs SET state = $1, attempts = attempts + $2,
          gpus = COALESCE($3, gpus), started_us = COALESCE($4::BIGINT, started_us),
          finished_us = COALESCE($5::BIGINT, finished_us),
          exit_code = COALESCE($6::INTEGER, exit_code), reason = $7,
          pid = COALESCE($8::INTEGER, CASE WHEN $12::INTEGER = 1 THEN NULL ELSE pid END),
          process_start_us =
            COALESCE($9::BIGINT, CASE WHEN $12::INTEGER = 1 THEN NULL ELSE process_start_us END)
        WHERE id = $10 AND state = $11 RETURNING )sql") +
                  kJobColumns)
                     .c_str(),
                 {std::string(JobStateName(to)), int64_t{to == JobState::kRunning ? 1 : 0}, gpus,
                  Micros(u.started_at), Micros(u.finished_at), Wide(u.exit_code), u.reason,
                  Wide(u.pid), Micros(u.process_started_at), id, std::string(JobStateName(from)),
                  // A new attempt does not keep the last one's process.
                  int64_t{to == JobState::kQueued || to == JobState::kRunning ? 1 : 0}},
                 "updating job " + std::to_string(id)));
  if (updated.empty()) {
    GLEANER_ASSIGN_OR_RETURN(JobRecord now, Get(id));  // NotFound for an unknown id
    return core::FailedPrecondition("job " + std::to_string(id) + " is " +
                                    std::string(JobStateName(now.state)) + ", not " +
                                    std::string(JobStateName(from)));
  }
  return JobFromRow(Row(updated, 0));
}

Status PgStore::ClaimGpus(sched::JobId id, JobState from, const std::vector<core::GpuUuid>& gpus) {
  GLEANER_RETURN_IF_ERROR(db_->Query("DELETE FROM gpu_claims WHERE job_id = $1", {id},
                                     "releasing the GPUs of job " + std::to_string(id))
                              .status());
  // On a conflict the update changes nothing and returns the holder: one
  // statement claims the GPU or says who has it. A claim another
  // transaction is making waits for it to end, so of two jobs started on
  // one GPU at once, the second finds the first's claim.
  for (const core::GpuUuid& gpu : gpus) {
    GLEANER_ASSIGN_OR_RETURN(Rows claimed,
                             db_->Query(R"sql(
          INSERT INTO gpu_claims (gpu, job_id) VALUES ($1, $2)
          ON CONFLICT (gpu) DO UPDATE SET job_id = gpu_claims.job_id RETURNING job_id)sql",
                                        {gpu.str(), id}, "claiming GPU " + gpu.str()));
    const sched::JobId holder = claimed.Int(0, 0);
    if (holder != id) return GpuTaken(id, from, gpu.str(), holder);
  }
  return Status::Ok();
}

Status PgStore::Annotate(const std::vector<std::pair<sched::JobId, std::string>>& reasons,
                         JobState state) {
  if (reasons.empty()) return Status::Ok();
  return db_->InTransaction([&]() -> Status {
    for (const auto& [id, reason] : reasons) {
      GLEANER_RETURN_IF_ERROR(db_->Query("UPDATE jobs SET reason = $1 WHERE id = $2 AND state = $3",
                                         {reason, id, std::string(JobStateName(state))},
                                         "annotating job " + std::to_string(id))
                                  .status());
    }
    return Status::Ok();
  });
}

core::Result<std::vector<sched::JobId>> PgStore::CancelArray(sched::JobId array_id,
                                                             const std::string& reason,
                                                             const std::string& actor) {
  // One statement, so one transaction: the tasks it reports are exactly
  // those it cancelled, those that held GPUs give them back, and each
  // one's history says so.
  GLEANER_ASSIGN_OR_RETURN(
      Rows cancelled, db_->Query((std::string(R"sql(
        WITH cancelled AS (
          UPDATE jobs SET state = 'cancelled', reason = $1
          WHERE array_id = $2 AND state IN )sql") +
                                  kActiveStates + R"sql(
          RETURNING id, user_name, gpus),
        released AS (DELETE FROM gpu_claims WHERE job_id IN (SELECT id FROM cancelled)),
        history AS (
          INSERT INTO events (at_us, kind, job_id, user_name, actor, gpus, detail)
          SELECT $3::BIGINT, 'cancelled', id, user_name, $4::TEXT, gpus, $1::TEXT FROM cancelled
          ORDER BY id)
        SELECT id FROM cancelled)sql")
                                     .c_str(),
                                 {reason, array_id, core::ToUnixMicros(core::RealClock().Now()),
                                  actor.empty() ? std::string("gleaner") : actor},
                                 "cancelling array " + std::to_string(array_id)));
  std::vector<sched::JobId> ids;
  ids.reserve(static_cast<size_t>(cancelled.size()));
  for (int i = 0; i < cancelled.size(); ++i) ids.push_back(cancelled.Int(i, 0));
  std::sort(ids.begin(), ids.end());
  return ids;
}

Status PgStore::RecordProcess(sched::JobId id, int pid, core::TimePoint started_at) {
  GLEANER_ASSIGN_OR_RETURN(
      Rows updated,
      db_->Query(
          "UPDATE jobs SET pid = $1, process_start_us = $2 WHERE id = $3 AND state = 'running'",
          {static_cast<int64_t>(pid), core::ToUnixMicros(started_at), id},
          "recording job " + std::to_string(id)));
  if (updated.affected() != 1) {
    return core::FailedPrecondition("job " + std::to_string(id) + " is not running");
  }
  return Status::Ok();
}

}  // namespace gleaner::store
