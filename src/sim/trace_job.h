#pragma once

#include <cstdint>

namespace gleaner::sim {

// One job of a plain replay: when it arrived, how long it ran on the
// cluster it was recorded on, and how many whole GPUs it held, all at once.
// Times are whole seconds from the start of the trace.
struct TraceJob {
  int64_t submit_s = 0;
  int64_t duration_s = 0;
  int gpus = 1;
};

}  // namespace gleaner::sim
