#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/units.h"

// Dates and times in UTC on <chrono>'s proleptic Gregorian calendar: the
// one place gleaner turns an instant into calendar fields and back, and
// writes and reads the forms it uses (RFC 3339 in documents and logs,
// "YYYY-MM-DD HH:MM:SS" in tables and traces; HTTP dates, server/, and
// price dates, cost/, are built on it).
namespace gleaner::core {

struct CivilTime {
  int year = 1970;
  unsigned month = 1;  // 1..12
  unsigned day = 1;    // 1..31
  int hour = 0;
  int minute = 0;
  int second = 0;
  int64_t micros = 0;    // within the second
  unsigned weekday = 4;  // 0 Sunday .. 6 Saturday; read by ToCivil's callers only
};

// The calendar fields of `t` (before 1970 too: the second is floored).
CivilTime ToCivil(TimePoint t);

// The instant the fields name; nullopt when they name none (2026-02-30,
// hour 24, minute 60, second 60, micros outside the second).
std::optional<TimePoint> FromCivil(const CivilTime& c);

// Whole days since 1970-01-01 of a valid date; nullopt otherwise.
std::optional<int64_t> DaysFromCivil(int year, unsigned month, unsigned day);

// "2026-11-29T18:53:47.120Z": milliseconds, always UTC.
std::string Rfc3339(TimePoint t);

// Rfc3339's form, the fraction optional (any number of digits, kept to
// the microsecond); nullopt for anything else.
std::optional<TimePoint> ParseRfc3339(std::string_view text);

// "2026-11-29 18:53:47": whole seconds, for tables and traces.
std::string FormatUtcSeconds(TimePoint t);
// FormatUtcSeconds's form; nullopt for anything else.
std::optional<TimePoint> ParseUtcSeconds(std::string_view text);

}  // namespace gleaner::core
