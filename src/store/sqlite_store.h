#pragma once

#include <functional>
#include <memory>
#include <string>

#include "store/store.h"

struct sqlite3;

namespace gleaner::store {

struct StoreProbe;
// The schema version of the SQLite file at `path`, opened read-only
// (open_store.h's ProbeStore).
core::Result<StoreProbe> ProbeSqliteStore(const std::string& path);

// ObservationStore, JobStore and TokenStore in one SQLite file (WAL journal,
// synchronous=FULL: a committed write survives a crash of the process and
// of the machine), or in memory for ":memory:". The schema is versioned
// with PRAGMA user_version and migrated on open. Not thread-safe: one
// connection, one user.
class SqliteStore final : public Store {
 public:
  static core::Result<std::unique_ptr<SqliteStore>> Open(const std::string& path);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

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
  explicit SqliteStore(sqlite3* db) : db_(db) {}
  core::Status Exec(const char* sql);
  // Runs `body` in a write transaction: committed when it succeeds, rolled
  // back (and its error returned) when it fails.
  core::Status InTransaction(const std::function<core::Status()>& body);
  // AddRollups and AddToProfiles inside a transaction.
  core::Status MergeRollups(const std::vector<observe::MinuteRollup>& rollups);
  core::Status AddProfileRows(const observe::UsageProfiles& delta);
  // Transition's halves, inside its transaction: the move itself, only
  // where the job is still in `from` (kFailedPrecondition where it is not),
  // and the GPUs job `id` claims instead of those it claimed
  // (kFailedPrecondition where another job holds one).
  core::Status CompareAndSet(sched::JobId id, JobState from, JobState to, const JobUpdate& u);
  // Appends the event of job `id`'s move, inside its transaction.
  core::Status RecordMove(sched::JobId id, JobState from, JobState to, const JobUpdate& u);
  core::Status ClaimGpus(sched::JobId id, JobState from, const std::vector<core::GpuUuid>& gpus);
  core::Result<std::map<std::string, observe::HourOfWeekProfile>> ProfileRows(
      const std::string& kind);

  sqlite3* db_;
};

}  // namespace gleaner::store
