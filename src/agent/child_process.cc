#include "agent/child_process.h"

#include <grp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace gleaner::agent {

std::vector<std::string> ExecCandidates(const std::string& program, const std::string& path) {
  if (program.find('/') != std::string::npos) return {program};
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = path.substr(start, end - start);
    out.push_back((dir.empty() ? "." : dir) + "/" + program);
    start = end + 1;
  }
  return out;
}

bool BecomeUser(const Account& account) {
  if (setgroups(account.groups.size(), account.groups.data()) != 0 || setgid(account.gid) != 0 ||
      setuid(account.uid) != 0) {
    return false;
  }
  if (account.uid != 0 && setuid(0) == 0) {  // must be gone
    errno = EPERM;
    return false;
  }
  return true;
}

void CloseDescriptorsBut(int keep) {
  const auto close_from_to = [](unsigned first, unsigned last) {
    return first > last || syscall(SYS_close_range, first, last, 0U) == 0;
  };
  if (keep < 3 ? close_from_to(3, ~0U)
               : close_from_to(3, static_cast<unsigned>(keep) - 1) &&
                     close_from_to(static_cast<unsigned>(keep) + 1, ~0U)) {
    return;
  }
  const long max = sysconf(_SC_OPEN_MAX);  // a kernel without close_range
  for (int fd = 3; fd < (max > 0 ? max : 65536); ++fd) {
    if (fd != keep) close(fd);
  }
}

bool AnyRunnable(const std::vector<const char*>& candidates, int* error) {
  *error = ENOENT;
  for (const char* program : candidates) {
    if (access(program, X_OK) == 0) return true;
    if (errno != ENOENT && errno != ENOTDIR) *error = errno;
  }
  return false;
}

int ExecFirst(const std::vector<const char*>& candidates, char* const* argv, char* const* envp) {
  int error = ENOENT;
  for (const char* program : candidates) {
    execve(program, argv, envp);
    if (errno != ENOENT && errno != ENOTDIR) error = errno;
  }
  return error;
}

}  // namespace gleaner::agent
