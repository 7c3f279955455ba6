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
// Likewise, but only a file it creates: anything already at `path` (a file
// someone else planted there) is an error, never written through.
Status CreatePrivateFile(const std::string& path, const std::string& text, int mode = 0600);
// Replaces `path` with `text` whole: written to PATH.new, created there
// (never one found there), flushed, and renamed over `path`, so a reader
// sees the old file or the new, never half of one. The file keeps its mode
// where it was ours (`mode` otherwise, less the umask). A file that holds
// `text` already is left alone.
Status ReplaceFile(const std::string& path, const std::string& text, int mode = 0600);
// The whole file; NotFound when absent, an error on a link.
Result<std::string> ReadPrivateFile(const std::string& path);

// Up to `max_bytes` of a job's log from `offset` (a follower asks again
// for the rest); empty when there is no log yet. Root reads it, so it is
// read only through a descriptor that is a plain file reached without a
// link.
Result<std::string> ReadLogChunk(const std::string& path, size_t offset, size_t max_bytes);

}  // namespace gleaner::core
