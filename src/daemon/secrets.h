#pragma once

#include <string>

#include "core/result.h"

// The secrets a daemon is given in files: the store's URI, the cluster's
// join secret, an agent's join token. A file others may read is refused.
namespace gleaner::daemon {

// The store a server uses: `flag` (--store), else the contents of `file`
// (--store-file), else $GLEANER_STORE; "" for the default. A password in
// `flag` is refused: every local user can read a process's arguments. A
// file readable by others is refused too.
core::Result<std::string> StoreUri(const std::string& flag, const std::string& file);

// The cluster's secret (coordinators only) from `path`, trimmed of
// surrounding white space, checked for length; a file others may read is
// refused.
core::Result<std::string> ReadJoinSecret(const std::string& path);

// An agent's one-time join token from `path`, likewise.
core::Result<std::string> ReadJoinToken(const std::string& path);

}  // namespace gleaner::daemon
