#pragma once

#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/status.h"

namespace gleaner::core {

// Either a value of T or a non-ok Status. Reading the value of an error (or
// the status of a value) is a broken invariant and aborts with the message.
// Thread-compatible.
template <typename T>
class [[nodiscard]] Result {
 public:
  // NOLINTBEGIN(google-explicit-constructor): implicit by design, as in absl::StatusOr.
  Result(T value) : state_(std::move(value)) {}
  Result(Status status) : state_(std::move(status)) {
    if (std::get<Status>(state_).ok()) Die("Result constructed from an ok Status");
  }
  // NOLINTEND(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }

  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(state_);
  }

  T& value() & { return Checked(); }
  const T& value() const& { return const_cast<Result*>(this)->Checked(); }
  T&& value() && { return std::move(Checked()); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  template <typename U>
  T value_or(U&& fallback) const& {
    return ok() ? std::get<T>(state_) : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  [[noreturn]] static void Die(const char* what) {
    std::fprintf(stderr, "gleaner: broken invariant: %s\n", what);
    std::abort();
  }
  T& Checked() {
    if (!ok()) {
      std::fprintf(stderr, "gleaner: value() of an error Result: %s\n",
                   std::get<Status>(state_).ToString().c_str());
      std::abort();
    }
    return std::get<T>(state_);
  }

  std::variant<T, Status> state_;
};

}  // namespace gleaner::core

// Assigns the value of `rexpr` (a Result) to `lhs`, or returns its status.
#define GLEANER_ASSIGN_OR_RETURN(lhs, rexpr) \
  GLEANER_ASSIGN_OR_RETURN_IMPL_(GLEANER_CONCAT_(gleaner_result_, __LINE__), lhs, rexpr)
#define GLEANER_CONCAT_INNER_(a, b) a##b
#define GLEANER_CONCAT_(a, b) GLEANER_CONCAT_INNER_(a, b)
#define GLEANER_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                   \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()
