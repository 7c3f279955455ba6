#pragma once

#include <string>
#include <string_view>

namespace gleaner::core {

// SHA-256 (FIPS 180-4) of `data`, as 64 lower-case hex digits. Used to keep
// API tokens only as digests, so a copy of the database grants nothing.
std::string Sha256Hex(std::string_view data);

// HMAC-SHA256 (RFC 2104) of `message` under `key`, as 64 hex digits: agent
// credentials are derived from the cluster's join secret with it.
std::string HmacSha256Hex(std::string_view key, std::string_view message);

// Whether two strings are equal, in a time that depends only on their
// lengths: comparing secrets must not tell an attacker how much matched.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace gleaner::core
