#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace gleaner::cluster {

// Where a component says what it did, a line at a time.
using Log = std::function<void(const std::string&)>;

// "job 42": how a log line names a job.
inline std::string Job(int64_t id) { return "job " + std::to_string(id); }

}  // namespace gleaner::cluster
