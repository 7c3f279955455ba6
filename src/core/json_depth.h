#pragma once

#include <string_view>

namespace gleaner::core {

// The deepest nesting gleaner accepts in JSON from a file, a request or a
// peer. Real documents nest a few levels; a deeper one only attacks the
// recursion in printing or destroying it (a scenario nested 100,000 deep
// overflowed the stack).
inline constexpr int kMaxJsonDepth = 64;

// Whether `text` opens more than `max_depth` arrays or objects inside one
// another, counting brackets outside strings. A cheap scan to run before
// handing untrusted text to a JSON parser; it does not validate.
bool NestsDeeperThan(std::string_view text, int max_depth = kMaxJsonDepth);

// `Json::parse(text, nullptr, false)` for untrusted text (Json is
// nlohmann::json or ordered_json): a discarded value when it is not JSON or
// nests deeper than kMaxJsonDepth.
template <typename Json>
Json ParseUntrustedJson(std::string_view text) {
  if (NestsDeeperThan(text)) return Json(Json::value_t::discarded);
  return Json::parse(text, nullptr, false);
}

}  // namespace gleaner::core
