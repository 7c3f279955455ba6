#include "store/leader_lease.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "store/open_store.h"
#include "store/postgres_entry.h"

namespace gleaner::store {

namespace {

// flock(2) on "<database>.leader": held while the file stays open.
class FileLease final : public LeaderLease {
 public:
  explicit FileLease(std::string path) : path_(std::move(path)) {}
  ~FileLease() override {
    if (fd_ >= 0) close(fd_);
  }
  FileLease(const FileLease&) = delete;
  FileLease& operator=(const FileLease&) = delete;

  core::Result<bool> Hold() override {
    if (held_) return true;
    if (fd_ < 0) {
      fd_ = open(path_.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
      if (fd_ < 0) {
        return core::Unavailable("cannot open " + path_ + ": " + std::strerror(errno));
      }
    }
    held_ = flock(fd_, LOCK_EX | LOCK_NB) == 0;
    return held_;
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool held_ = false;
};

// A database in memory belongs to one process: it always leads.
class SoleLease final : public LeaderLease {
 public:
  core::Result<bool> Hold() override { return true; }
};

}  // namespace

core::Result<std::unique_ptr<LeaderLease>> OpenLeaderLease(const std::string& where) {
  if (IsPostgresUri(where)) {
    if (!PostgresSupported()) return PostgresUnsupported();
    return OpenPostgresLease(where);
  }
  if (where == ":memory:") return std::unique_ptr<LeaderLease>(std::make_unique<SoleLease>());
  return std::unique_ptr<LeaderLease>(std::make_unique<FileLease>(where + ".leader"));
}

}  // namespace gleaner::store
