#pragma once

#include <optional>
#include <string>

#include "store/job_store.h"

namespace gleaner::cluster {

// How a job's process ended, as far as its host knows.
struct ExitFacts {
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool status_unknown = false;  // killed with the process that would have recorded it
  bool asked_to_leave = false;  // vacated: an owner, a preemption, a lease
  std::string leave_reason;
  std::string killed_for;  // the agent killed it, and why (not asked to leave)
};

// Where the job goes in the store, and why in words: a job asked to leave
// is requeued whatever it said, one whose end is unknown is requeued too,
// exit 0 succeeds and anything else fails. `unknown_reason` says why the
// status is unknown.
struct ExitMove {
  store::JobState to = store::JobState::kFailed;
  std::string reason;
};
ExitMove MoveForExit(const ExitFacts& facts, const std::string& unknown_reason);

// Why a session that would have been requeued ended instead: started again,
// it would have nobody attached.
std::string SessionEnded(const std::string& why);

}  // namespace gleaner::cluster
