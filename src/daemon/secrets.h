#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

// The secrets a daemon is given in files: the store's URI, the cluster's
// join secret, an agent's join token. All are read by ReadSecretFile.
namespace gleaner::daemon {

inline constexpr int64_t kMaxSecretBytes = 65536;

// A secret kept in a file, surrounding white space dropped. Refused (with
// what to do) unless the path names a regular file itself, not a link,
// that no one but its owner may read or write (mode 600 or stricter), of
// at most kMaxSecretBytes; a FIFO or device is refused, never waited on.
// `what` names it in errors ("cluster secret").
core::Result<std::string> ReadSecretFile(const std::string& path, const std::string& what);

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
