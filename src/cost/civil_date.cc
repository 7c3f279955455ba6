#include "cost/civil_date.h"

#include <cstdio>

#include "core/civil_time.h"

namespace gleaner::cost {
namespace {

std::optional<unsigned> Digits(std::string_view s) {
  unsigned v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  return v;
}

}  // namespace

std::optional<int64_t> ParseIsoDate(std::string_view text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  const auto y = Digits(text.substr(0, 4));
  const auto m = Digits(text.substr(5, 2));
  const auto d = Digits(text.substr(8, 2));
  if (!y || !m || !d || *y < 1970) return std::nullopt;
  return core::DaysFromCivil(static_cast<int>(*y), *m, *d);
}

std::string FormatIsoDate(int64_t days) {
  const core::CivilTime c = core::ToCivil(core::FromUnixMicros(days * 86400 * 1'000'000));
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", c.year, c.month, c.day);
  return buf;
}

int64_t DaysFromUnixSeconds(int64_t unix_s) {
  return unix_s >= 0 ? unix_s / 86400 : -((-unix_s + 86399) / 86400);
}

}  // namespace gleaner::cost
