#pragma once

// Typed fields of a TOML table, each checked with an error that names the
// file, the line and the key (config_file.cc and its sections read with
// these). Absent keys leave `out` as it is.
#include <string>
#include <vector>

#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include "core/result.h"
#include "core/units.h"

namespace gleaner::config {

core::Status Error(const std::string& path, const toml::node& node, const std::string& key,
                   const std::string& what);
// An unknown key in `table` is an error that lists the allowed ones.
core::Status CheckKeys(const std::string& path, const toml::table& table, const std::string& prefix,
                       std::initializer_list<const char*> allowed);
core::Status Number(const std::string& path, const toml::table& t, const std::string& prefix,
                    const char* key, double min, double max, double* out);
// A whole number from `min` to `max`: a count is never 2.5.
core::Status WholeNumber(const std::string& path, const toml::table& t, const std::string& prefix,
                         const char* key, int64_t min, int64_t max, int64_t* out);
core::Status Seconds(const std::string& path, const toml::table& t, const std::string& prefix,
                     const char* key, double min_s, double max_s, core::Duration* out);
core::Status Strings(const std::string& path, const toml::table& t, const std::string& prefix,
                     const char* key, std::vector<std::string>* out);
// A string value of `key`.
core::Status Text(const std::string& path, const toml::table& t, const std::string& prefix,
                  const char* key, std::string* out);
core::Status Flag(const std::string& path, const toml::table& t, const std::string& prefix,
                  const char* key, bool* out);
// An offset date-time (2026-12-01T18:00:00Z) as a time point.
core::Result<core::TimePoint> Instant(const std::string& path, const toml::node& node,
                                      const std::string& key);

}  // namespace gleaner::config
