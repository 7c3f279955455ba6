#pragma once

#include "core/units.h"

namespace gleaner::core {

// The only way gleaner code learns the time. Decisions take time as an
// argument; the code that drives them holds a Clock. Implementations must be
// safe to call from any thread.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

// Wall-clock time from the operating system.
class RealClock final : public Clock {
 public:
  TimePoint Now() const override;
};

// Time that moves only when told to; for tests. Not thread-safe: tests that
// share one across threads must synchronise themselves.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = FromUnixMicros(0)) : now_(start) {}
  TimePoint Now() const override { return now_; }
  void Advance(Duration d) { now_ += d; }
  void Set(TimePoint t) { now_ = t; }

 private:
  TimePoint now_;
};

}  // namespace gleaner::core
