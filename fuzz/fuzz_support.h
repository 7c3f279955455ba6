#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

// What the fuzz targets share. A target hands its input to a parser the
// daemon runs on untrusted text; any crash, sanitizer report or failed
// Require() is a bug in the project, never in the target.
namespace gleaner::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A property the parser promises (a spec it accepted survives its own
// JSON); aborting makes libFuzzer keep the input as a crash.
inline void Require(bool holds, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "gleaner fuzz: broken property: %s\n", what);
  std::abort();
}

// A file in memory (memfd) for readers that only take a path: writing the
// input costs no disk, and each reader's open sees the new content from
// the start. One per target process; not thread-safe.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("gleaner-fuzz", 0)) {
    Require(fd_ >= 0, "memfd_create failed");
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile() { close(fd_); }

  // Replaces the content with `text`; returns the path that opens it.
  const std::string& Write(std::string_view text) {
    Require(ftruncate(fd_, 0) == 0, "ftruncate of the memory file failed");
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n =
          pwrite(fd_, text.data() + done, text.size() - done, static_cast<off_t>(done));
      Require(n > 0, "write to the memory file failed");
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

}  // namespace gleaner::fuzz
