#pragma once

#include <string>

#include "core/result.h"

// Where a gleaner keeps its state: one rule for the daemons, which own a
// data directory, and for the commands that find one to talk to.
namespace gleaner::config {

// Where root's gleaner keeps its state, its socket and (with
// /etc/gleaner/gleaner.toml) its config.
inline constexpr const char* kSystemDataDir = "/var/lib/gleaner";
inline constexpr const char* kSystemConfig = "/etc/gleaner/gleaner.toml";

// The data directory a daemon uses: `flag` if set, else $GLEANER_DATA_DIR,
// else /var/lib/gleaner as root and $XDG_DATA_HOME/gleaner (by default
// ~/.local/share/gleaner) otherwise.
std::string DataDir(const std::string& flag);

// Whether `path`, in a data directory, exists; an error that says what to
// do where this user may not look in the directory (one private to
// another user), never an exception.
core::Result<bool> InDataDir(const std::string& path);

// The one a client command talks to: as DataDir, except that a user with no
// gleaner of their own running (no socket in their data directory), and no
// --data-dir or $GLEANER_DATA_DIR, finds root's in /var/lib/gleaner.
std::string ClientDataDir(const std::string& flag);

}  // namespace gleaner::config
