#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace gleaner::core {

// What went wrong, coarse enough for callers to branch on. The message says
// the rest: what was wrong and how to fix it.
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // the caller's input is wrong; the message says which part
  kNotFound,          // a named thing does not exist
  kNotSupported,      // the device, driver or platform cannot do this
  kUnauthenticated,   // the caller did not say who they are, or not credibly
  kPermissionDenied,  // the caller lacks the right
  kUnavailable,       // a dependency (driver, server) is missing or down; retry may help
  kDeviceLost,        // the hardware is gone until a reset or reboot
  kFailedPrecondition,
  kInternal,           // a bug or an unexpected answer from below
  kResourceExhausted,  // a limit on the caller (queued jobs, stored bytes) is reached
};

std::string_view StatusCodeName(StatusCode code);

// The outcome of an operation that returns no value. Cheap to copy when ok.
// Thread-compatible.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "NOT_FOUND: no GPU with UUID GPU-1234"
  std::string ToString() const;

  // Returns a copy whose message is "context: message"; ok stays ok.
  Status WithContext(std::string_view context) const;

  // Marks a deliberately ignored status, so the reason is greppable.
  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status NotSupported(std::string m) { return {StatusCode::kNotSupported, std::move(m)}; }
inline Status Unauthenticated(std::string m) {
  return {StatusCode::kUnauthenticated, std::move(m)};
}
inline Status PermissionDenied(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status DeviceLost(std::string m) { return {StatusCode::kDeviceLost, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status ResourceExhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}

}  // namespace gleaner::core

// Returns early from the enclosing function when `expr` is not ok.
#define GLEANER_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::gleaner::core::Status gleaner_status_ = (expr);  \
    if (!gleaner_status_.ok()) return gleaner_status_; \
  } while (false)
