#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/units.h"

namespace gleaner::net {

// HTTP's date form, "Sun, 06 Nov 1994 08:49:37 GMT", whatever the locale;
// and back (nullopt for anything else).
std::string FormatHttpDate(core::TimePoint t);
std::optional<core::TimePoint> ParseHttpDate(std::string_view text);

}  // namespace gleaner::net
