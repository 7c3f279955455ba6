#include "daemon/secrets.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cluster/agent_credentials.h"

namespace gleaner::daemon {

namespace {

// Whether a PostgreSQL URI carries a password: user:PASSWORD@host, or a
// password= parameter.
bool HoldsPassword(const std::string& uri) {
  const size_t scheme = uri.find("://");
  if (scheme != std::string::npos) {
    const size_t at = uri.find('@', scheme + 3);
    const size_t slash = uri.find('/', scheme + 3);
    if (at != std::string::npos && (slash == std::string::npos || at < slash) &&
        uri.substr(scheme + 3, at - scheme - 3).find(':') != std::string::npos) {
      return true;
    }
  }
  return uri.find("password=") != std::string::npos;
}

}  // namespace

core::Result<std::string> ReadSecretFile(const std::string& path, const std::string& what) {
  // Opened once, without following a link or blocking on a FIFO, and
  // judged by what was opened: a check on the path and a second open could
  // meet two different files.
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) {
      return core::PermissionDenied("the " + what + " " + path +
                                    " is a symbolic link: give the file itself");
    }
    return core::NotFound("cannot read the " + what + " " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  std::string refused;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    refused = " is not a regular file";
  } else if ((st.st_mode & 077) != 0) {
    refused = " can be read or written by others: chmod 600 " + path;
  } else if (st.st_size > kMaxSecretBytes) {
    refused = " is larger than a secret (" + std::to_string(kMaxSecretBytes) + " bytes at most)";
  }
  if (!refused.empty()) {
    close(fd);
    return core::PermissionDenied("the " + what + " " + path + refused);
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || text.size() + static_cast<size_t>(n) > kMaxSecretBytes) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  const auto first = text.find_first_not_of(" \t\r\n");
  const auto last = text.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

core::Result<std::string> StoreUri(const std::string& flag, const std::string& file) {
  if (!flag.empty() && !file.empty()) {
    return core::InvalidArgument("give --store or --store-file, not both");
  }
  if (!flag.empty()) {
    if (HoldsPassword(flag)) {
      return core::InvalidArgument(
          "--store holds a password, which every local user can read in /proc/PID/cmdline; put "
          "the URI in a file (--store-file FILE, chmod 600), in GLEANER_STORE, or the password in "
          "libpq's ~/.pgpass (PGPASSFILE)");
    }
    return flag;
  }
  if (!file.empty()) return ReadSecretFile(file, "store file");
  const char* env = std::getenv("GLEANER_STORE");
  return std::string(env != nullptr ? env : "");
}

core::Result<std::string> ReadJoinSecret(const std::string& path) {
  if (path.empty()) {
    return core::InvalidArgument(
        "--join-secret-file is required: a file holding the cluster's secret, for the "
        "coordinators only (make one with `openssl rand -hex 32 > join.secret && chmod 600 "
        "join.secret`)");
  }
  GLEANER_ASSIGN_OR_RETURN(std::string secret, ReadSecretFile(path, "cluster secret"));
  if (auto s = cluster::CheckJoinSecret(secret); !s.ok()) {
    return core::InvalidArgument(path + ": " + s.message());
  }
  return secret;
}

core::Result<std::string> ReadJoinToken(const std::string& path) {
  core::Result<std::string> token = ReadSecretFile(path, "join token");
  if (token.ok() && !token->starts_with("gjt_")) {
    return core::InvalidArgument(path +
                                 ": not a join token (they start with gjt_; `gleaner "
                                 "agent-token create` on a coordinator host makes one)");
  }
  return token;
}

}  // namespace gleaner::daemon
