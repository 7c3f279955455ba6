#include "agent/account.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

namespace gleaner::agent {

core::Result<Account> LookUpAccount(uint32_t uid) {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? static_cast<size_t>(size) : 16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return core::NotFound("no user with uid " + std::to_string(uid) + " on this host");
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
