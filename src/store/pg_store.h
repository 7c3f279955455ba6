#pragma once

#include <map>
#include <memory>
#include <string>

#include "store/store.h"

namespace gleaner::store {

namespace pg {
class Connection;
}

// ObservationStore, JobStore and TokenStore in a PostgreSQL database, for
// many hosts sharing one store. Behaves as SqliteStore does, method for
// method (one conformance suite runs against both). Every write is a
// transaction that has committed when the call returns, and the server
// keeps a committed write through a crash (the session never runs with
// synchronous_commit=off). Transitions are compare-and-set in the database,
// so two coordinators on two hosts can never both start one job, nor give
// one GPU to two jobs.
//
// The schema is versioned in the table gleaner_schema and migrated on open;
// processes opening a new database at once take turns (docs/postgres.md).
// Job and token ids come from sequences: increasing, but a failed submit
// leaves a gap, and the ids of two concurrent submits may interleave.
//
// Not thread-safe: one connection, one user at a time; open one store per
// thread. A connection lost between calls is re-opened by the next call.
class PgStore final : public Store {
 public:
  // `conninfo` is a libpq connection string or URI:
  // "postgresql://gleaner@db.example:5432/gleaner",
  // "postgresql:///gleaner?host=/run/postgresql", "host=db dbname=gleaner".
  // kUnavailable when the server cannot be reached ("cannot connect to
  // PostgreSQL at host=db dbname=gleaner: ..."), kInvalidArgument for a
  // malformed string; messages never include the password.
  static core::Result<std::unique_ptr<PgStore>> Open(const std::string& conninfo);
  ~PgStore() override;
  PgStore(const PgStore&) = delete;
  PgStore& operator=(const PgStore&) = delete;

  core::Status AddRollups(const std::vector<observe::MinuteRollup>& rollups) override;
  core::Result<int64_t> AddAgentMinutes(
      const std::vector<AgentMinutes>& batch,
      const std::map<std::string, std::string>& project_of_user) override;
  core::Result<std::vector<observe::MinuteRollup>> Rollups(const core::GpuUuid& uuid,
                                                           core::TimePoint from,
                                                           core::TimePoint to) override;
  core::Result<std::vector<observe::MinuteRollup>> RollupsBetween(core::TimePoint from,
                                                                  core::TimePoint to) override;
  core::Status SaveGpus(const std::vector<GpuRecord>& gpus) override;
  core::Result<std::vector<GpuRecord>> Gpus() override;
  core::Result<int64_t> ForgetGpus(const std::string& host) override;
  core::Status SaveVerdicts(const std::vector<observe::Verdict>& verdicts) override;
  core::Result<std::vector<observe::Verdict>> LatestVerdicts() override;
  core::Status SavePauseModel(const std::string& host,
                              const observe::QuietSpellModel& model) override;
  core::Result<std::optional<observe::QuietSpellModel>> PauseModel(
      const std::string& host) override;
  core::Status AddToProfiles(const observe::UsageProfiles& delta) override;
  core::Result<std::map<std::string, observe::HourOfWeekProfile>> Profiles(
      const std::string& kind) override;
  core::Result<int64_t> PruneRollups(core::TimePoint before) override;

  core::Result<std::vector<JobRecord>> SubmitAll(const std::vector<NewJob>& jobs,
                                                 core::TimePoint now) override;
  core::Result<JobRecord> Get(sched::JobId id) override;
  core::Result<std::map<sched::JobId, JobState>> StatesOf(
      const std::set<sched::JobId>& ids) override;
  core::Result<std::vector<JobRecord>> Find(const JobQuery& query) override;
  core::Result<std::map<JobState, int64_t>> CountByState() override;
  core::Result<ActiveUsage> UsageOfUser(uint32_t uid, int64_t at_most) override;
  core::Result<ActiveUsage> UsageOfProject(const std::string& project, int64_t at_most) override;
  core::Result<JobRecord> Transition(sched::JobId id, JobState from, JobState to,
                                     const JobUpdate& update) override;
  core::Status Annotate(const std::vector<std::pair<sched::JobId, std::string>>& reasons,
                        JobState state) override;
  core::Result<std::vector<sched::JobId>> CancelArray(sched::JobId array_id,
                                                      const std::string& reason,
                                                      const std::string& actor) override;
  core::Status RecordProcess(sched::JobId id, int pid, core::TimePoint started_at) override;

  core::Result<EventRecord> AppendEvent(const EventRecord& event) override;
  core::Result<std::vector<EventRecord>> Events(const EventQuery& query) override;
  core::Result<int64_t> PruneEvents(core::TimePoint before) override;
  core::Result<PolicyVersion> AddPolicy(const PolicyVersion& policy,
                                        const std::string& event) override;
  core::Result<PolicyVersion> GetPolicy(int64_t version) override;
  core::Result<std::vector<PolicyVersion>> ListPolicies(int64_t limit) override;

  core::Result<TokenRecord> AddToken(const TokenRecord& token, const std::string& sha256) override;
  core::Result<TokenRecord> FindToken(const std::string& sha256) override;
  core::Result<std::vector<TokenRecord>> ListTokens() override;
  core::Status RevokeToken(int64_t id, core::TimePoint now) override;
  core::Status AddJoinToken(const JoinToken& token, const std::string& sha256) override;
  core::Result<int64_t> SpendJoinToken(const std::string& sha256, const std::string& host,
                                       core::TimePoint now) override;
  core::Result<int64_t> AgentGeneration(const std::string& host) override;
  core::Result<std::map<std::string, int64_t>> AgentGenerations() override;

 private:
  explicit PgStore(std::unique_ptr<pg::Connection> db);
  // Stores one roll-up, merged with the minute's stored part if there is
  // one; inside a transaction.
  core::Status AddRollup(const observe::MinuteRollup& added);
  // AddToProfiles inside a transaction.
  core::Status AddProfileRows(const observe::UsageProfiles& delta);
  // Transition's halves, inside its transaction: the move itself, only
  // where the job is still in `from` (kFailedPrecondition where it is not),
  // and the GPUs job `id` claims instead of those it claimed
  // (kFailedPrecondition where another job holds one).
  core::Result<JobRecord> CompareAndSet(sched::JobId id, JobState from, JobState to,
                                        const JobUpdate& u);
  // Appends the event of job `id`'s move, inside its transaction.
  core::Status RecordMove(sched::JobId id, JobState from, JobState to, const JobUpdate& u);
  core::Status ClaimGpus(sched::JobId id, JobState from, const std::vector<core::GpuUuid>& gpus);
  core::Result<std::map<std::string, observe::HourOfWeekProfile>> ProfileRows(
      const std::string& kind);

  std::unique_ptr<pg::Connection> db_;
};

}  // namespace gleaner::store
