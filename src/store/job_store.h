#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "sched/job_spec.h"

namespace gleaner::store {

// Where a job is in its life. Allowed moves (JobStore::Transition checks):
//   pending_approval -> queued (approved), cancelled (denied, expired)
//   queued   -> running, held, cancelled
//   held     -> queued, cancelled
//   running  -> vacating, succeeded, failed, cancelled, queued (re-adopt lost)
//   vacating -> queued (requeued after the owner returned), failed, cancelled
// succeeded, failed and cancelled are final.
enum class JobState {
  kPendingApproval,
  kQueued,
  kHeld,
  kRunning,
  kVacating,
  kSucceeded,
  kFailed,
  kCancelled
};

std::string_view JobStateName(JobState s);
std::optional<JobState> ParseJobState(std::string_view name);
bool IsFinal(JobState s);
bool CanTransition(JobState from, JobState to);

// Collects job states for StatesOf: a job's own, or, where the id names an
// array (its first task's id, Slurm's meaning), the whole array's: not
// ended while any task is not (the state of one such), else succeeded when
// every task did, failed when any failed, cancelled otherwise.
class DependencyStates {
 public:
  explicit DependencyStates(const std::set<sched::JobId>& ids) : ids_(ids) {}
  // One row read: a job with its array (if any).
  void Add(sched::JobId id, std::optional<sched::JobId> array_id, JobState state);
  std::map<sched::JobId, JobState> Take();

 private:
  const std::set<sched::JobId>& ids_;
  std::map<sched::JobId, JobState> own_;
  std::map<sched::JobId, std::vector<JobState>> arrays_;
};

struct JobRecord {
  sched::JobId id = 0;
  std::string user;
  uint32_t uid = 0;
  sched::JobSpec spec;
  JobState state = JobState::kQueued;
  int attempts = 0;  // starts so far
  core::TimePoint submitted_at;
  std::optional<core::TimePoint> started_at;
  std::optional<core::TimePoint> finished_at;
  std::vector<core::GpuUuid> gpus;  // assigned while running or vacating
  std::optional<int> exit_code;
  std::string reason;  // why the last transition happened, in words
  // The running process (group leader) and when it started: together they
  // let a restarted gleaner find its jobs again.
  std::optional<int> pid;
  std::optional<core::TimePoint> process_started_at;
  // A task of an array (a sweep): the array is named by its first task's id.
  std::optional<sched::JobId> array_id;
  int64_t array_index = 0;

  bool operator==(const JobRecord&) const = default;
};

// What a transition sets besides the state; unset fields keep their value.
struct JobUpdate {
  std::optional<std::vector<core::GpuUuid>> gpus;
  std::optional<core::TimePoint> started_at;
  std::optional<core::TimePoint> finished_at;
  std::optional<int> exit_code;
  std::string reason;
  std::optional<int> pid;
  std::optional<core::TimePoint> process_started_at;
  // For the history (EventStore): who asked for the move (empty: gleaner
  // itself), the event it is, where not the move's own (EventOfMove), and
  // when (unset: when it started or finished, else now).
  std::string actor;
  std::string event;
  std::optional<core::TimePoint> at;
};

// A job to queue, and who submits it (it will run as them).
struct NewJob {
  std::string user;
  uint32_t uid = 0;
  sched::JobSpec spec;
  // Non-empty: the rule that makes it wait for an approver, in words; it
  // is queued in pending_approval with this as its reason.
  std::string approval;
};

// How many jobs a spec queues: one, or one per index of its array.
inline int64_t TaskCount(const sched::JobSpec& spec) { return spec.array ? spec.array->size() : 1; }

// One page of the job list, oldest first. Pages are bounded so that no
// reader holds the store long however many jobs there are; each page's
// last id is where the next one starts.
struct JobQuery {
  std::vector<JobState> states;  // every state when empty
  std::string user;              // everyone's when empty
  sched::JobId after = 0;        // only jobs with a greater id
  int64_t limit = 0;             // every match when 0
};

// What the jobs of one user or project that have not ended (waiting for
// approval, queued, held, running, vacating) hold: how many, and their stored specs' bytes
// (StoredSpecText, once per task).
struct ActiveUsage {
  int64_t jobs = 0;
  int64_t spec_bytes = 0;
};

// The durable job queue. Submit returns only once the job is on disk: an
// acknowledged job survives a kill -9 of the process at any moment.
// Transitions are compare-and-set on the current state, so two actors can
// never both start the same job. One connection; not thread-safe.
class JobStore {
 public:
  virtual ~JobStore() = default;
  // Queues every job in one transaction: all are on disk when it returns,
  // or none is. One commit for many submits is what makes a busy API fast.
  // A job with an array becomes one task per index, in order, so the
  // result holds TaskCount(spec) records for each job.
  virtual core::Result<std::vector<JobRecord>> SubmitAll(const std::vector<NewJob>& jobs,
                                                         core::TimePoint now) = 0;
  core::Result<JobRecord> Submit(const std::string& user, uint32_t uid, const sched::JobSpec& spec,
                                 core::TimePoint now) {
    GLEANER_ASSIGN_OR_RETURN(std::vector<JobRecord> saved, SubmitAll({{user, uid, spec, ""}}, now));
    return std::move(saved.front());
  }
  virtual core::Result<JobRecord> Get(sched::JobId id) = 0;
  // The state of each of `ids` that exists, an array's id standing for the
  // whole array (DependencyStates), in one read (a queue's dependencies,
  // however many jobs wait on them).
  virtual core::Result<std::map<sched::JobId, JobState>> StatesOf(
      const std::set<sched::JobId>& ids) = 0;
  virtual core::Result<std::vector<JobRecord>> Find(const JobQuery& query) = 0;
  // Every job in `states` (all when empty), oldest first.
  core::Result<std::vector<JobRecord>> List(const std::vector<JobState>& states) {
    JobQuery query;
    query.states = states;
    return Find(query);
  }
  // How many jobs are in each state that has any; from an index, without
  // reading a job.
  virtual core::Result<std::map<JobState, int64_t>> CountByState() = 0;
  // What `uid`'s, or `project`'s, jobs that have not ended hold, counting
  // at most `at_most` of them (0: all): a check against a limit reads no
  // more than the limit's worth, however many a user has queued.
  virtual core::Result<ActiveUsage> UsageOfUser(uint32_t uid, int64_t at_most) = 0;
  virtual core::Result<ActiveUsage> UsageOfProject(const std::string& project, int64_t at_most) = 0;
  // Moves `id` from `from` to `to`. kFailedPrecondition when the job is not
  // in `from` any more (someone else moved it) or the move is not allowed.
  // A running or vacating job holds its GPUs (update.gpus of its start),
  // and no GPU is held by two jobs: a start on a GPU another job holds
  // fails with kFailedPrecondition, naming the GPU and its holder, and
  // changes nothing. A job leaving running or vacating (but for running ->
  // vacating) gives its GPUs back, in the same transaction.
  virtual core::Result<JobRecord> Transition(sched::JobId id, JobState from, JobState to,
                                             const JobUpdate& update) = 0;
  // Sets the reasons of jobs still in `state` (why queued jobs wait), in
  // one transaction; a job that has moved on is left as it is.
  virtual core::Status Annotate(const std::vector<std::pair<sched::JobId, std::string>>& reasons,
                                JobState state) = 0;
  // Cancels every task of array `array_id` that has not ended, in one
  // transaction that also gives their GPUs back and records who did it
  // (`actor`; empty: gleaner); their ids.
  virtual core::Result<std::vector<sched::JobId>> CancelArray(sched::JobId array_id,
                                                              const std::string& reason,
                                                              const std::string& actor) = 0;
  // Records the process a running job was started as.
  virtual core::Status RecordProcess(sched::JobId id, int pid, core::TimePoint started_at) = 0;
};

}  // namespace gleaner::store
