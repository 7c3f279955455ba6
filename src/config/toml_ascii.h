#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

namespace gleaner::config {

// `text` with no non-ASCII character left where toml++ reads code (see
// toml_ascii.cc for why): an error for one in code, its \U escape in a
// string, '?' in a comment. A valid document means what it meant, and
// lines stay where they were.
core::Result<std::string> WithoutNonAscii(std::string_view text, const std::string& path);

}  // namespace gleaner::config
