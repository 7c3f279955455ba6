#include "core/status.h"

#include "core/enum_names.h"

namespace gleaner::core {

constexpr auto kStatusCodeNames = MakeEnumNames<StatusCode>(
    {
        {StatusCode::kOk, "OK"},
        {StatusCode::kInvalidArgument, "INVALID_ARGUMENT"},
        {StatusCode::kNotFound, "NOT_FOUND"},
        {StatusCode::kNotSupported, "NOT_SUPPORTED"},
        {StatusCode::kUnauthenticated, "UNAUTHENTICATED"},
        {StatusCode::kPermissionDenied, "PERMISSION_DENIED"},
        {StatusCode::kUnavailable, "UNAVAILABLE"},
        {StatusCode::kDeviceLost, "DEVICE_LOST"},
        {StatusCode::kFailedPrecondition, "FAILED_PRECONDITION"},
        {StatusCode::kResourceExhausted, "RESOURCE_EXHAUSTED"},
        {StatusCode::kInternal, "INTERNAL"},
    },
    "UNKNOWN");

std::string_view StatusCodeName(StatusCode code) { return kStatusCodeNames.Name(code); }

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string message(context);
  message += ": ";
  message += message_;
  return {code_, std::move(message)};
}

}  // namespace gleaner::core
