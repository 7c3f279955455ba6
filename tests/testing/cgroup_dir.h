#pragma once

#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "agent/cgroup_files.h"

namespace gleaner::testing {

// Where process `pid` is: its directory in the v1 hierarchy of
// `controller`, or its cgroup v2 directory (an empty `controller`); "" when
// it is in none.
inline std::string CgroupDirOf(pid_t pid, const std::string& controller) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const size_t first = line.find(':');
    const size_t second = line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string list = "," + line.substr(first + 1, second - first - 1) + ",";
    if (controller.empty() ? line.rfind("0::", 0) == 0
                           : list.find("," + controller + ",") != std::string::npos) {
      const std::string path = line.substr(second + 1);
      return agent::CgroupMount(controller).value_or("?") + (path == "/" ? "" : path);
    }
  }
  return "";
}

// A limit as the kernel holds it for `pid`: `v2_file` in its cgroup v2
// directory where that has it, else `v1_file` in its `v1_controller` one.
inline std::string LimitOf(pid_t pid, const std::string& v2_file, const std::string& v1_controller,
                           const std::string& v1_file) {
  const std::string v2 = CgroupDirOf(pid, "") + "/" + v2_file;
  if (std::filesystem::exists(v2)) return agent::ReadCgroupFile(v2);
  return agent::ReadCgroupFile(CgroupDirOf(pid, v1_controller) + "/" + v1_file);
}

}  // namespace gleaner::testing
