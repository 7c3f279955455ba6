#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/clock.h"
#include "core/mutex.h"
#include "core/result.h"

namespace gleaner::core {

// Interactive sessions' terminals between the job that was given one and
// the client that attaches to it: the agent offers a started session's
// pseudo-terminal master, the API hands it once to the session's owner
// (as a descriptor passed over the Unix socket). A master nobody takes by
// its deadline is closed: the kernel then hangs the session up, so a
// client that died while its session waited in the queue leaves no job
// holding a GPU. Thread-safe; owns the descriptors it holds.
class TerminalHandoff {
 public:
  // How long a started session waits for its client.
  static constexpr Duration kAttachWithin = Seconds(60);

  TerminalHandoff() = default;
  ~TerminalHandoff();
  TerminalHandoff(const TerminalHandoff&) = delete;
  TerminalHandoff& operator=(const TerminalHandoff&) = delete;

  // Holds `master` (now owned) for job `job` of user `uid` until
  // `deadline`; a master the job held before is closed.
  void Offer(int64_t job, uint32_t uid, int master, TimePoint deadline);

  // The master of `job`, for `caller_uid`: its owner, or root. The caller
  // owns the descriptor returned; no one can take it again. NotFound when
  // none is held (never offered, already taken, or expired),
  // PermissionDenied for anyone else.
  Result<int> Take(int64_t job, uint32_t caller_uid);

  // Closes the masters past their deadline at `now`; their jobs.
  std::vector<int64_t> Expire(TimePoint now);

 private:
  struct Held {
    uint32_t uid = 0;
    int master = -1;
    TimePoint deadline;
  };
  Mutex mu_;
  std::map<int64_t, Held> held_ GLEANER_GUARDED_BY(mu_);
};

}  // namespace gleaner::core
