#pragma once

#include <string>

#include "core/result.h"

namespace gleaner::core {

// Files a daemon keeps in its data directory, opened without following a
// link at the final component and only when they are regular files: a link
// planted there cannot make the daemon write over, or read back, a file it
// was not meant to touch, and a FIFO cannot stall it.

// Writes `text` to `path` (created with `mode`, or truncated) and flushes it
// to disk; fails on a link.
Status WritePrivateFile(const std::string& path, const std::string& text, int mode = 0600);
// The whole file; NotFound when absent, an error on a link.
Result<std::string> ReadPrivateFile(const std::string& path);

}  // namespace gleaner::core
