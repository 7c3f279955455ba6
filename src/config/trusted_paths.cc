#include "config/trusted_paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace gleaner::config {

namespace {

std::string Octal(unsigned mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", mode);
  return text;
}

// Whether `path` (canonical: the data directory, or the config file) and
// every directory above it can be changed only by root or by us, as sshd's
// StrictModes asks of a home: otherwise whoever can change one could swap
// what root opens or reads for a link to any file, or for rules of their
// own. A world-writable parent with the sticky bit (/tmp) is safe: no one
// else can rename or remove what we own in it. `what` names `path` ("the
// data directory"); `fix` says what to use instead.
core::Status CheckTrusted(const std::filesystem::path& path, const std::string& what,
                          const std::string& fix, bool sticky_itself = false) {
  const uid_t self = geteuid();
  for (std::filesystem::path p = path;; p = p.parent_path()) {
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0) {
      return core::Unavailable("cannot check " + p.string() + ": " + std::strerror(errno));
    }
    const bool itself = p == path;
    std::string problem;
    if (st.st_uid != 0 && st.st_uid != self) {
      problem = "belongs to uid " + std::to_string(st.st_uid);
    } else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
               ((itself && !sticky_itself) || !(st.st_mode & S_ISVTX))) {
      problem = "can be written by others (mode " + Octal(st.st_mode & 07777) + ")";
    }
    if (!problem.empty()) {
      return core::PermissionDenied(
          (itself ? what + " " : "a parent of " + what + ", ") + p.string() + ", " + problem +
          ": whoever can change it could make gleaner open other files, or follow other rules, "
          "in its place. Use " +
          fix + (itself ? ", or chmod go-w " + p.string() : ""));
    }
    if (p == p.root_path()) return core::Status::Ok();
  }
}

constexpr const char* kDataDirFix =
    "a data directory that only root (or the user gleaner runs as) can change, like "
    "/var/lib/gleaner (--data-dir)";

// The data directory, resolved, when it is trusted.
core::Result<std::filesystem::path> TrustedDataDir(const std::string& data_dir) {
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::canonical(data_dir, ec);
  if (ec) {
    return core::Unavailable("cannot resolve the data directory " + data_dir + ": " + ec.message());
  }
  GLEANER_RETURN_IF_ERROR(CheckTrusted(canonical, "the data directory", kDataDirFix));
  return canonical;
}

// Job logs live in DIR/logs: a directory, not a link, trusted as DIR is.
// NotFound when it is not there yet.
core::Status CheckLogsDir(const std::filesystem::path& dir) {
  const std::filesystem::path logs = dir / "logs";
  struct stat st {};
  if (lstat(logs.c_str(), &st) != 0) return core::NotFound(logs.string() + " does not exist");
  if (!S_ISDIR(st.st_mode)) {
    return core::PermissionDenied(logs.string() + " is not a directory (a link?); remove it");
  }
  return CheckTrusted(logs, "the data directory", kDataDirFix);
}

}  // namespace

core::Status CheckDataDir(const std::string& data_dir) {
  GLEANER_ASSIGN_OR_RETURN(const std::filesystem::path dir, TrustedDataDir(data_dir));
  if (core::Status s = CheckLogsDir(dir); !s.ok() && s.code() != core::StatusCode::kNotFound) {
    return s;
  }
  // It records who submitted what, and their tokens' digests.
  const std::filesystem::path db = dir / "gleaner.db";
  struct stat st {};
  if (lstat(db.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    return core::PermissionDenied(db.string() + " can be read by others (mode " +
                                  Octal(st.st_mode & 07777) + "): chmod 600 " + db.string());
  }
  return core::Status::Ok();
}

core::Status PrepareDataDir(const std::string& data_dir) {
  std::error_code ec;
  const bool created = !std::filesystem::exists(data_dir, ec);
  std::filesystem::create_directories(data_dir, ec);
  if (!ec && created) {
    using std::filesystem::perms;
    std::filesystem::permissions(data_dir,
                                 perms::owner_all | perms::group_exec | perms::others_exec,
                                 std::filesystem::perm_options::replace, ec);
  }
  if (ec) {
    return core::Unavailable("cannot create the data directory " + data_dir + ": " + ec.message() +
                             " (choose another with --data-dir)");
  }
  // logs/ is made only inside a directory found trusted.
  GLEANER_ASSIGN_OR_RETURN(const std::filesystem::path dir, TrustedDataDir(data_dir));
  const std::filesystem::path logs = dir / "logs";
  if (mkdir(logs.c_str(), 0755) != 0 && errno != EEXIST) {
    return core::Unavailable("cannot create " + logs.string() + ": " + std::strerror(errno));
  }
  return CheckLogsDir(dir);
}

core::Status CheckOutputDirTrusted(const std::string& file) {
  std::error_code ec;
  const std::filesystem::path dir =
      std::filesystem::canonical(std::filesystem::absolute(file, ec).parent_path(), ec);
  if (ec) return core::Unavailable("cannot write " + file + ": " + ec.message());
  return CheckTrusted(dir, "the directory of " + file, "a directory only root (or you) can change",
                      /*sticky_itself=*/true);
}

core::Result<std::string> TrustedConfigPath(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(path, ec);
  if (ec == std::errc::no_such_file_or_directory) return path;  // the defaults
  if (ec) return core::Unavailable("cannot resolve the config file " + path + ": " + ec.message());
  GLEANER_RETURN_IF_ERROR(
      CheckTrusted(canonical, "the config file",
                   "a config file that only root (or the user gleaner runs as) can change, like "
                   "/etc/gleaner/gleaner.toml (--config)"));
  return canonical.string();
}

}  // namespace gleaner::config
