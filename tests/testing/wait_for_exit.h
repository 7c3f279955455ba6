#pragma once

#include <chrono>
#include <optional>
#include <thread>

#include "agent/job_runner.h"

namespace gleaner::testing {

// Reaps `runner` until job `id` has ended (up to 10 s); how it ended.
inline std::optional<agent::JobExit> WaitForExit(agent::JobRunner& runner, sched::JobId id) {
  for (int i = 0; i < 1000; ++i) {
    for (const agent::JobExit& x : runner.Reap()) {
      if (x.id == id) return x;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

}  // namespace gleaner::testing
