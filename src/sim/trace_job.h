#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gleaner::sim {

// One job of a plain replay: when it arrived, how long it ran on the
// cluster it was recorded on, how many whole GPUs it held, all at once, and
// how urgent it is. Times are whole seconds from the start of the trace.
struct TraceJob {
  int64_t submit_s = 0;
  int64_t duration_s = 0;
  int gpus = 1;
  // Higher first, for the policies that order by it (`priority`, and
  // `gleaner` through the Scheduler's numeric priority). ITP jobs have none
  // and keep 0; openb pods get theirs from their QoS (openb_jobs.h).
  int priority = 0;
  // The GPU models it may run on (openb's gpu_spec, matched as the
  // scheduler matches model constraints); empty: any.
  std::vector<std::string> gpu_models = {};
};

}  // namespace gleaner::sim
