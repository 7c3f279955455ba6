#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/result.h"

namespace gleaner::agent {

// A user as the host knows them: what a process needs to become them.
struct Account {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string home;
  std::string shell;
  std::vector<gid_t> groups;  // supplementary, the primary included
};

// NotFound when the host has no user with `uid`; Unavailable when the
// host could not say (its directory service, memory or descriptors failed
// for the moment).
core::Result<Account> LookUpAccount(uint32_t uid);

}  // namespace gleaner::agent
