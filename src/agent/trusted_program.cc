#include "agent/trusted_program.h"

#include <sys/stat.h>

#include <filesystem>

namespace gleaner::agent {
namespace {

// Why `path` could have been changed by someone other than root; empty
// when it could not. A sticky directory protects what root has in it, but
// not the file's own directory, where others could add what is found first.
std::string Untrusted(const std::filesystem::path& path) {
  for (std::filesystem::path p = path;; p = p.parent_path()) {
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0) return p.string() + " cannot be looked at";
    const bool leaf = p == path || p == path.parent_path();
    if (st.st_uid != 0) return p.string() + " is not root's";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (leaf || (st.st_mode & S_ISVTX) == 0)) {
      return p.string() + " can be written by others";
    }
    if (p == p.root_path()) return "";
  }
}

}  // namespace

std::vector<std::string> RootProgramDirs() {
  return {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"};
}

core::Result<std::string> TrustedProgram(const std::string& name,
                                         const std::vector<std::string>& dirs) {
  std::string looked;
  std::string passed_over;
  for (const std::string& dir : dirs) {
    looked += (looked.empty() ? "" : ", ") + dir;
    // A link (/bin -> usr/bin) is followed to where the file really is, and
    // that place is what must be trusted.
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::canonical(dir + "/" + name, ec);
    if (ec) continue;
    struct stat st {};
    if (stat(real.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & S_IXUSR) == 0) {
      continue;
    }
    if (const std::string why = Untrusted(real); !why.empty()) {
      if (passed_over.empty()) passed_over = "; passed over " + real.string() + ": " + why;
      continue;
    }
    return real.string();
  }
  return core::NotFound(name + " is not installed where root's programs are (" + looked + ")" +
                        passed_over);
}

}  // namespace gleaner::agent
