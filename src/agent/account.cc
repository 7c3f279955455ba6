#include "agent/account.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gleaner::agent {

core::Result<Account> LookUpAccount(uint32_t uid) {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? static_cast<size_t>(size) : 16384);
  passwd entry{};
  passwd* found = nullptr;
  int error;
  while ((error = getpwuid_r(uid, &entry, buf.data(), buf.size(), &found)) == ERANGE &&
         buf.size() < (size_t{1} << 24)) {
    buf.resize(buf.size() * 2);
  }
  // Only "no such user" is an answer; anything else (a directory service
  // that did not answer, descriptors or memory short for a moment) may go
  // away, and must not fail a job for good.
  if (found == nullptr &&
      (error == 0 || error == ENOENT || error == ESRCH || error == EBADF || error == EPERM)) {
    return core::NotFound("no user with uid " + std::to_string(uid) + " on this host");
  }
  if (found == nullptr) {
    return core::Unavailable("cannot look up the user with uid " + std::to_string(uid) + ": " +
                             std::strerror(error));
  }
  Account a{found->pw_name,
            found->pw_uid,
            found->pw_gid,
            found->pw_dir,
            found->pw_shell ? found->pw_shell : "",
            {}};
  int count = 64;
  a.groups.resize(static_cast<size_t>(count));
  while (getgrouplist(a.name.c_str(), a.gid, a.groups.data(), &count) < 0) {
    a.groups.resize(static_cast<size_t>(count));
  }
  a.groups.resize(static_cast<size_t>(count));
  return a;
}

}  // namespace gleaner::agent
