#include "agent/cgroup_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gleaner::agent {
namespace {

// Whether the comma-separated `list` names `word`.
bool Lists(std::string_view list, std::string_view word) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (list.substr(0, comma) == word) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

std::optional<std::string> CgroupMount(std::string_view controller) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // "36 25 0:31 / /sys/fs/cgroup rw,... - cgroup2 cgroup2 rw,..."
    // "40 30 0:35 / /sys/fs/cgroup/cpu,cpuacct rw,... - cgroup cgroup rw,cpu,cpuacct"
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream after(line.substr(dash + 3));
    std::string type, source, options;
    after >> type >> source >> options;
    if (controller.empty() ? type != "cgroup2"
                           : (type != "cgroup" || !Lists(options, controller))) {
      continue;
    }
    std::istringstream before(line.substr(0, dash));
    std::string field, mount_point;
    for (int i = 0; i < 5 && before >> field; ++i) {
      if (i == 4) mount_point = field;
    }
    if (!mount_point.empty()) return mount_point;
  }
  return std::nullopt;
}

std::optional<std::string> OwnCgroup(std::string_view controller) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    // "0::/path" (v2), "4:memory:/path" or "2:cpu,cpuacct:/path" (v1)
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string_view list = std::string_view(line).substr(first + 1, second - first - 1);
    if (controller.empty() ? line.rfind("0::", 0) == 0 : Lists(list, controller)) {
      return line.substr(second + 1);
    }
  }
  return std::nullopt;
}

core::Status WriteCgroupFile(const std::string& path, std::string_view text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return core::Unavailable(path + ": " + std::strerror(errno));
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int saved = errno;
  close(fd);
  if (!ok) return core::Unavailable("writing " + path + ": " + std::strerror(saved));
  return core::Status::Ok();
}

std::string ReadCgroupFile(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace gleaner::agent
