#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace gleaner::gpu {

// Why a reading has no value. "Not supported" is a fact about the device and
// is not an error; the rest are.
enum class Unreadable {
  kNotSupported,  // this GPU, driver or mode has no such reading (fans on passive boards, ...)
  kNoPermission,  // the reading needs rights the caller lacks
  kGpuLost,       // the GPU fell off the bus; every later reading fails too
  kError,         // the driver returned some other error; see the detail
};

std::string_view UnreadableName(Unreadable why);

// One value read from a GPU, or the reason there is none. Distinguishes "not
// supported" from zero, which a bare number cannot. Thread-compatible.
template <typename T>
class Reading {
 public:
  Reading() : state_(Missing{Unreadable::kNotSupported, {}}) {}
  static Reading Of(T value) { return Reading(std::move(value)); }
  static Reading Fail(Unreadable why, std::string detail = {}) {
    Reading r;
    r.state_ = Missing{why, std::move(detail)};
    return r;
  }

  bool has_value() const { return std::holds_alternative<T>(state_); }
  const T& value() const {
    if (!has_value()) {
      std::fprintf(stderr, "gleaner: value() of an unreadable reading\n");
      std::abort();
    }
    return std::get<T>(state_);
  }
  T value_or(T fallback) const { return has_value() ? std::get<T>(state_) : fallback; }
  // Only meaningful when !has_value().
  Unreadable why() const {
    return has_value() ? Unreadable::kError : std::get<Missing>(state_).why;
  }
  const std::string& detail() const {
    static const std::string kEmpty;
    return has_value() ? kEmpty : std::get<Missing>(state_).detail;
  }

  bool operator==(const Reading& other) const {
    if (has_value() != other.has_value()) return false;
    if (has_value()) return value() == other.value();
    return why() == other.why();
  }

 private:
  struct Missing {
    Unreadable why;
    std::string detail;
  };
  explicit Reading(T value) : state_(std::move(value)) {}

  std::variant<T, Missing> state_;
};

}  // namespace gleaner::gpu
