#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "core/units.h"
#include "sched/job_spec.h"
#include "store/job_store.h"

namespace gleaner::store {

// One entry of the append-only history (docs/events.md): what happened,
// when, to which job or user, and who did it. A job's moves are recorded
// by the store in the transaction that makes them, so the history cannot
// miss one; other events (parks, policy changes, tokens) are appended.
struct EventRecord {
  int64_t id = 0;  // assigned in order of appending
  core::TimePoint at;
  // submitted, approved, denied, expired, started, vacating, requeued,
  // resized, held, released, succeeded, failed, cancelled; parked,
  // restored; policy_applied, policy_rolled_back; token_created,
  // token_revoked; slurm_requeued, slurm_cancelled, slurm_action_failed.
  std::string kind;
  std::optional<sched::JobId> job;
  std::string user;   // whose job or token, or whom the event concerns
  std::string actor;  // who did it: a user, or "gleaner"
  std::vector<core::GpuUuid> gpus;
  std::string detail;  // in words: the rule, the reason, the exit code

  bool operator==(const EventRecord&) const = default;
};

// A page of the history, oldest first; every field narrows it.
struct EventQuery {
  std::optional<sched::JobId> job;
  std::string user;
  std::string kind;
  std::optional<core::TimePoint> since;
  int64_t after = 0;  // only events with a greater id
  int64_t limit = 0;  // every match when 0
};

// The event a job's move from `from` to `to` is recorded as, unless the
// move names its own (JobUpdate::event).
std::string_view EventOfMove(JobState from, JobState to);

class EventStore {
 public:
  virtual ~EventStore() = default;
  // Appends `event` (its id is assigned).
  virtual core::Result<EventRecord> AppendEvent(const EventRecord& event) = 0;
  virtual core::Result<std::vector<EventRecord>> Events(const EventQuery& query) = 0;
  // Drops the events before `before` (the retention); how many.
  virtual core::Result<int64_t> PruneEvents(core::TimePoint before) = 0;
};

}  // namespace gleaner::store
