#pragma once

#include <string>

#include "core/result.h"

// What a root daemon opens in its data directory and reads from its config
// file must not be swappable by another user: the checks that say so, and
// how to fix what fails them.
namespace gleaner::config {

// Creates the data directory and its logs/: others may reach a socket
// inside (x) but not list it. Refuses (PermissionDenied, saying how to fix
// it) a data directory, or any directory above it, that anyone but root or
// gleaner's own user could change, since root opens files inside.
core::Status PrepareDataDir(const std::string& data_dir);

// The same checks on a data directory that exists, changing nothing
// (gleaner doctor).
core::Status CheckDataDir(const std::string& data_dir);

// Refuses (PermissionDenied, saying how to fix it) to write `file` in a
// directory that anyone but root or us could change (a sticky one, like
// /tmp, is fine): a report written there as root could be sent over any
// file by whoever swaps the directory.
core::Status CheckOutputDirTrusted(const std::string& file);

// The config file at `path` resolved (links followed once, here), to be
// read from there on; `path` itself where there is none (the defaults).
// Refuses (PermissionDenied, saying how to fix it) a file that anyone but
// root or gleaner's own user could change, directly or through a directory
// above it: its rules say who may do what as root.
core::Result<std::string> TrustedConfigPath(const std::string& path);

}  // namespace gleaner::config
