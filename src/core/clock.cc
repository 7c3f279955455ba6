#include "core/clock.h"

#include <chrono>

namespace gleaner::core {

TimePoint RealClock::Now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

}  // namespace gleaner::core
