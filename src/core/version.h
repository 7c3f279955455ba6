#pragma once

#include <string_view>

namespace gleaner::core {

// The release this binary is (gleaner --version, gleaner_build_info).
inline constexpr std::string_view kVersion = "0.1.0";

}  // namespace gleaner::core
