#pragma once

#include <string>
#include <string_view>

namespace gleaner::core {

// SHA-256 (FIPS 180-4) of `data`, as 64 lower-case hex digits. Used to keep
// API tokens only as digests, so a copy of the database grants nothing.
std::string Sha256Hex(std::string_view data);

}  // namespace gleaner::core
