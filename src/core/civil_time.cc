#include "core/civil_time.h"

#include <chrono>
#include <cstdio>

namespace gleaner::core {

namespace {

// The non-negative number of `width` digits at `at`, or -1.
int Digits(std::string_view s, size_t at, size_t width) {
  if (at + width > s.size()) return -1;
  int v = 0;
  for (size_t i = at; i < at + width; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

// "YYYY-MM-DD?HH:MM:SS", `separator` at '?', into `c`; false when the
// text has another shape (the fields' ranges are FromCivil's to judge).
bool ReadDateTime(std::string_view text, char separator, CivilTime* c) {
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != separator ||
      text[13] != ':' || text[16] != ':') {
    return false;
  }
  const int year = Digits(text, 0, 4), month = Digits(text, 5, 2), day = Digits(text, 8, 2);
  c->hour = Digits(text, 11, 2);
  c->minute = Digits(text, 14, 2);
  c->second = Digits(text, 17, 2);
  if (year < 0 || month < 0 || day < 0 || c->hour < 0 || c->minute < 0 || c->second < 0) {
    return false;
  }
  c->year = year;
  c->month = static_cast<unsigned>(month);
  c->day = static_cast<unsigned>(day);
  return true;
}

}  // namespace

CivilTime ToCivil(TimePoint t) {
  using namespace std::chrono;
  const sys_time<microseconds> at{microseconds{ToUnixMicros(t)}};
  const sys_days day = floor<days>(at);
  const year_month_day date{day};
  const hh_mm_ss<microseconds> time{at - day};
  CivilTime c;
  c.year = static_cast<int>(date.year());
  c.month = static_cast<unsigned>(date.month());
  c.day = static_cast<unsigned>(date.day());
  c.hour = static_cast<int>(time.hours().count());
  c.minute = static_cast<int>(time.minutes().count());
  c.second = static_cast<int>(time.seconds().count());
  c.micros = time.subseconds().count();
  c.weekday = weekday{day}.c_encoding();
  return c;
}

std::optional<int64_t> DaysFromCivil(int year, unsigned month, unsigned day) {
  using namespace std::chrono;
  const year_month_day date{std::chrono::year{year}, std::chrono::month{month},
                            std::chrono::day{day}};
  if (!date.ok()) return std::nullopt;
  return sys_days{date}.time_since_epoch().count();
}

std::optional<TimePoint> FromCivil(const CivilTime& c) {
  const std::optional<int64_t> days = DaysFromCivil(c.year, c.month, c.day);
  if (!days || c.hour < 0 || c.hour > 23 || c.minute < 0 || c.minute > 59 || c.second < 0 ||
      c.second > 59 || c.micros < 0 || c.micros > 999'999) {
    return std::nullopt;
  }
  const int64_t seconds = *days * 86400 + c.hour * 3600 + c.minute * 60 + c.second;
  return FromUnixMicros(seconds * 1'000'000 + c.micros);
}

std::string Rfc3339(TimePoint t) {
  const CivilTime c = ToCivil(t);
  char out[48];
  std::snprintf(out, sizeof out, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", c.year, c.month, c.day,
                c.hour, c.minute, c.second, static_cast<int>(c.micros / 1000));
  return out;
}

std::optional<TimePoint> ParseRfc3339(std::string_view text) {
  CivilTime c;
  if (text.size() < 20 || text.back() != 'Z' || !ReadDateTime(text, 'T', &c)) return std::nullopt;
  const std::string_view fraction = text.substr(19, text.size() - 20);
  if (!fraction.empty()) {
    if (fraction.size() < 2 || fraction[0] != '.') return std::nullopt;
    int64_t scale = 100'000;
    for (const char d : fraction.substr(1)) {
      if (d < '0' || d > '9') return std::nullopt;
      c.micros += (d - '0') * scale;
      scale /= 10;
    }
  }
  return FromCivil(c);
}

std::string FormatUtcSeconds(TimePoint t) {
  const CivilTime c = ToCivil(t);
  char out[40];
  std::snprintf(out, sizeof out, "%04d-%02u-%02u %02d:%02d:%02d", c.year, c.month, c.day, c.hour,
                c.minute, c.second);
  return out;
}

std::optional<TimePoint> ParseUtcSeconds(std::string_view text) {
  CivilTime c;
  if (text.size() != 19 || !ReadDateTime(text, ' ', &c)) return std::nullopt;
  return FromCivil(c);
}

}  // namespace gleaner::core
