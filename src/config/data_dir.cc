#include "config/data_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace gleaner::config {

std::string DataDir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("GLEANER_DATA_DIR"); env && *env) return env;
  if (geteuid() == 0) return kSystemDataDir;
  // The XDG base directories: only an absolute $XDG_DATA_HOME counts.
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && xdg[0] == '/') {
    return std::string(xdg) + "/gleaner";
  }
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.local/share/gleaner";
}

core::Result<bool> InDataDir(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) return true;
  const int error = errno;
  if (error == ENOENT || error == ENOTDIR) return false;
  const std::string dir = std::filesystem::path(path).parent_path().string();
  if (error == EACCES) {
    return core::PermissionDenied(
        "cannot look in " + dir +
        ": it is private to its owner. Run this as its owner, give "
        "your own --data-dir, or reach its gleaner with --server URL and a token");
  }
  return core::Unavailable("cannot look at " + path + ": " + std::strerror(error));
}

std::string ClientDataDir(const std::string& flag) {
  const std::string own = DataDir(flag);
  const char* env = std::getenv("GLEANER_DATA_DIR");
  if (!flag.empty() || (env != nullptr && *env) || geteuid() == 0) return own;
  std::error_code ec;
  if (std::filesystem::exists(own + "/gleaner.sock", ec)) return own;
  if (std::filesystem::exists(std::string(kSystemDataDir) + "/gleaner.sock", ec)) {
    return kSystemDataDir;
  }
  return own;
}

}  // namespace gleaner::config
