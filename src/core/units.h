#pragma once

#include <chrono>
#include <cstdint>

namespace gleaner::core {

// Time: one representation everywhere. Durations are std::chrono types so
// units are checked by the compiler; TimePoint is wall-clock time in
// microseconds since the Unix epoch, which is what stores and traces hold.
using Duration = std::chrono::microseconds;
using Seconds = std::chrono::seconds;
using Milliseconds = std::chrono::milliseconds;
using TimePoint = std::chrono::time_point<std::chrono::system_clock, Duration>;

inline constexpr TimePoint FromUnixMicros(int64_t us) { return TimePoint(Duration(us)); }
inline constexpr int64_t ToUnixMicros(TimePoint t) { return t.time_since_epoch().count(); }
inline constexpr double ToSecondsDouble(Duration d) { return static_cast<double>(d.count()) / 1e6; }

// Bytes: a strong type so a MiB count is never passed where bytes are meant.
class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(uint64_t count) : count_(count) {}

  static constexpr Bytes KiB(uint64_t n) { return Bytes(n << 10); }
  static constexpr Bytes MiB(uint64_t n) { return Bytes(n << 20); }
  static constexpr Bytes GiB(uint64_t n) { return Bytes(n << 30); }

  constexpr uint64_t count() const { return count_; }
  constexpr double ToMiB() const { return static_cast<double>(count_) / (1 << 20); }
  constexpr double ToGiB() const { return static_cast<double>(count_) / (1 << 30); }

  constexpr auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes other) const { return Bytes(count_ + other.count_); }
  // Saturates at zero: "used minus reserved" must never wrap.
  constexpr Bytes operator-(Bytes other) const {
    return Bytes(count_ > other.count_ ? count_ - other.count_ : 0);
  }

 private:
  uint64_t count_ = 0;
};

}  // namespace gleaner::core
