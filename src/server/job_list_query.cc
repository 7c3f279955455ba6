#include "server/job_list_query.h"

#include <algorithm>

#include "server/routing.h"

namespace gleaner::server {

namespace {

// "queued,held" -> the states, each named once.
core::Result<std::vector<store::JobState>> ParseStates(const std::string& text) {
  std::vector<store::JobState> states;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string name = text.substr(start, end - start);
    start = end + 1;
    const std::optional<store::JobState> state = store::ParseJobState(name);
    if (!state) {
      return core::InvalidArgument(
          "state: \"" + name.substr(0, 64) +
          "\" is not a job state; expected a comma-separated list of pending_approval, queued, "
          "held, running, vacating, succeeded, failed, cancelled");
    }
    if (std::find(states.begin(), states.end(), *state) == states.end()) states.push_back(*state);
  }
  return states;
}

}  // namespace

core::Result<store::JobQuery> ParseJobListQuery(const std::map<std::string, std::string>& query) {
  GLEANER_RETURN_IF_ERROR(OnlyKnownParameters(query, {"all", "state", "user", "limit", "after"}));
  store::JobQuery q;
  const std::string all = QueryValue(query, "all");
  if (!all.empty() && all != "1") return core::InvalidArgument("all: expected 1");
  if (query.contains("state")) {
    if (!all.empty()) return core::InvalidArgument("give all=1 or state=..., not both");
    GLEANER_ASSIGN_OR_RETURN(q.states, ParseStates(QueryValue(query, "state")));
  } else if (all.empty()) {
    q.states = {store::JobState::kPendingApproval, store::JobState::kQueued, store::JobState::kHeld,
                store::JobState::kRunning, store::JobState::kVacating};
  }
  q.user = QueryValue(query, "user");
  if (query.contains("user") && q.user.empty()) {
    return core::InvalidArgument("user: expected a user name");
  }
  q.limit = kDefaultJobPage;
  if (query.contains("limit")) {
    auto limit = ParseId(QueryValue(query, "limit"), "page size");
    if (!limit.ok() || *limit > kMaxJobPage) {
      return core::InvalidArgument("limit: expected a whole number from 1 to " +
                                   std::to_string(kMaxJobPage));
    }
    q.limit = *limit;
  }
  if (query.contains("after")) {
    GLEANER_ASSIGN_OR_RETURN(q.after, ParseId(QueryValue(query, "after"), "job"));
  }
  return q;
}

}  // namespace gleaner::server
