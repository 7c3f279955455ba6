#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace gleaner::testing {

// Where the shared cluster traces are: $GLEANER_TRACE_DIR, or ../shared/traces
// beside the source tree.
inline std::string TraceDir() {
  if (const char* dir = std::getenv("GLEANER_TRACE_DIR"); dir && *dir) return dir;
  return std::string(GLEANER_SOURCE_DIR) + "/../shared/traces";
}

}  // namespace gleaner::testing

// Skips the test, saying how to provide the trace, when `path` is missing.
#define GLEANER_SKIP_WITHOUT_TRACE(path)                                               \
  if (!std::filesystem::exists(path)) {                                                \
    GTEST_SKIP() << "no trace at " << (path)                                           \
                 << "; set GLEANER_TRACE_DIR to the traces folder (../shared/traces)"; \
  }
