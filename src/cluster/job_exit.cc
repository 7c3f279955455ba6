#include "cluster/job_exit.h"

namespace gleaner::cluster {

ExitMove MoveForExit(const ExitFacts& facts, const std::string& unknown_reason) {
  using store::JobState;
  if (facts.status_unknown) return {JobState::kQueued, unknown_reason};
  if (facts.asked_to_leave) return {JobState::kQueued, "vacated: " + facts.leave_reason};
  if (facts.exit_code && *facts.exit_code == 0) return {JobState::kSucceeded, "exited 0"};
  const std::string how = facts.exit_code
                              ? "exited " + std::to_string(*facts.exit_code)
                              : "killed by signal " + std::to_string(facts.signal.value_or(0));
  return {JobState::kFailed, facts.killed_for.empty() ? how : how + ": " + facts.killed_for};
}

std::string SessionEnded(const std::string& why) {
  return "the session was ended (a session is never requeued): " + why;
}

}  // namespace gleaner::cluster
