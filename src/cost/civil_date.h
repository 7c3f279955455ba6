#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gleaner::cost {

// Calendar dates as whole days since 1970-01-01 (proleptic Gregorian), the
// unit every price age is measured in. Pure functions.

// The day number of `text` when it is a valid "YYYY-MM-DD" with a year from
// 1970 to 9999; nullopt otherwise (2026-02-30 is invalid).
std::optional<int64_t> ParseIsoDate(std::string_view text);

// "YYYY-MM-DD" of a day number >= 0.
std::string FormatIsoDate(int64_t days);

// The day number of a time in seconds since 1970-01-01 UTC (floor).
int64_t DaysFromUnixSeconds(int64_t unix_s);

}  // namespace gleaner::cost
