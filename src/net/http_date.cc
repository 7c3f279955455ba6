#include "net/http_date.h"

#include <strings.h>

#include <algorithm>
#include <cstdio>

#include "core/civil_time.h"

namespace gleaner::net {
namespace {
constexpr const char* kWeekdays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
}  // namespace

std::string FormatHttpDate(core::TimePoint t) {
  const core::CivilTime c = core::ToCivil(t);
  char out[40];
  std::snprintf(out, sizeof out, "%s, %02u %s %04d %02d:%02d:%02d GMT", kWeekdays[c.weekday], c.day,
                kMonths[c.month - 1], c.year, c.hour, c.minute, c.second);
  return out;
}

std::optional<core::TimePoint> ParseHttpDate(std::string_view text) {
  // Any case: header values reach here lower-cased.
  char weekday[4] = {}, month[4] = {}, zone[4] = {};
  int day = 0, year = 0, hour = 0, minute = 0, second = 0, used = 0;
  const std::string s(text);
  // Field widths keep a peer's long digit runs from overflowing an int.
  if (std::sscanf(s.c_str(), "%3[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d %3[A-Za-z]%n", weekday,
                  &day, month, &year, &hour, &minute, &second, zone, &used) != 8 ||
      static_cast<size_t>(used) != s.size() || strcasecmp(zone, "GMT") != 0 || year < 1970 ||
      day < 1) {
    return std::nullopt;
  }
  core::CivilTime c;
  c.month = 0;
  for (unsigned i = 0; i < 12; ++i) {
    if (strcasecmp(month, kMonths[i]) == 0) c.month = i + 1;
  }
  c.year = year;
  c.day = static_cast<unsigned>(day);
  c.hour = hour;
  c.minute = minute;
  c.second = std::min(second, 59);  // a leap second, as the second before
  return core::FromCivil(c);
}

}  // namespace gleaner::net
