#include "core/terminal_handoff.h"

#include <unistd.h>

#include <string>

namespace gleaner::core {

TerminalHandoff::~TerminalHandoff() {
  for (const auto& [job, held] : held_) close(held.master);
}

void TerminalHandoff::Offer(int64_t job, uint32_t uid, int master, TimePoint deadline) {
  MutexLock lock(mu_);
  auto [it, added] = held_.try_emplace(job);
  if (!added) close(it->second.master);
  it->second = Held{uid, master, deadline};
}

Result<int> TerminalHandoff::Take(int64_t job, uint32_t caller_uid) {
  MutexLock lock(mu_);
  const auto it = held_.find(job);
  if (it == held_.end()) {
    return NotFound("job " + std::to_string(job) +
                    " has no terminal waiting here: it is not an interactive session of this "
                    "host, has not started yet, or someone attached already");
  }
  if (caller_uid != 0 && caller_uid != it->second.uid) {
    return PermissionDenied("job " + std::to_string(job) +
                            " is another user's session: only its owner (or root) may attach");
  }
  const int master = it->second.master;
  held_.erase(it);
  return master;
}

std::vector<int64_t> TerminalHandoff::Expire(TimePoint now) {
  std::vector<int64_t> expired;
  MutexLock lock(mu_);
  for (auto it = held_.begin(); it != held_.end();) {
    if (it->second.deadline > now) {
      ++it;
      continue;
    }
    close(it->second.master);
    expired.push_back(it->first);
    it = held_.erase(it);
  }
  return expired;
}

}  // namespace gleaner::core
