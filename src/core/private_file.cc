#include "core/private_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gleaner::core {

namespace {

// Writes `text` through a file opened with `flags` besides O_WRONLY
// O_NOFOLLOW O_NONBLOCK O_CLOEXEC, and flushes it to disk.
Status WriteWith(const std::string& path, const std::string& text, int mode, int flags) {
  const int fd = open(path.c_str(), flags | O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                      static_cast<mode_t>(mode));
  if (fd < 0) return Unavailable("cannot write " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Unavailable("cannot write " + path + ": not a regular file");
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      close(fd);
      return Unavailable("cannot write " + path + ": " + why);
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = fsync(fd) == 0;
  close(fd);
  if (!synced) return Unavailable("cannot flush " + path + " to disk");
  return Status::Ok();
}

}  // namespace

Status WritePrivateFile(const std::string& path, const std::string& text, int mode) {
  return WriteWith(path, text, mode, O_CREAT | O_TRUNC);
}

Status CreatePrivateFile(const std::string& path, const std::string& text, int mode) {
  return WriteWith(path, text, mode, O_CREAT | O_EXCL);
}

Status ReplaceFile(const std::string& path, const std::string& text, int mode) {
  if (auto now = ReadPrivateFile(path); now.ok() && *now == text) return Status::Ok();
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()) {
    mode = static_cast<int>(st.st_mode & 0666);  // ours: as it was
  }
  const std::string next = path + ".new";
  if (unlink(next.c_str()) != 0 && errno != ENOENT) {
    return Unavailable("cannot replace " + next + ": " + std::strerror(errno));
  }
  GLEANER_RETURN_IF_ERROR(CreatePrivateFile(next, text, mode));
  if (std::rename(next.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    unlink(next.c_str());
    return Unavailable("cannot replace " + path + ": " + why);
  }
  return Status::Ok();
}

Result<std::string> ReadPrivateFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound("no " + path);
    return Unavailable("cannot read " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Unavailable("cannot read " + path + ": not a regular file");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return Unavailable("cannot read " + path + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

Result<std::string> ReadLogChunk(const std::string& path, size_t offset, size_t max_bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::string();
    return FailedPrecondition("cannot read this job's log: " + std::string(std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return FailedPrecondition("this job's log is not a plain file");
  }
  std::string data(max_bytes, '\0');
  const ssize_t n = pread(fd, data.data(), max_bytes, static_cast<off_t>(offset));
  close(fd);
  data.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return data;
}

}  // namespace gleaner::core
