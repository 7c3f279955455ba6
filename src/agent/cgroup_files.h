#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gleaner::agent {

// Where a cgroup hierarchy is mounted, from /proc/self/mountinfo: cgroup v2
// (an empty `controller`), or the v1 hierarchy that holds `controller`
// ("cpu", "memory"; one mount may hold several, "cpu,cpuacct").
std::optional<std::string> CgroupMount(std::string_view controller = {});

// This process's cgroup in that hierarchy, from /proc/self/cgroup
// ("/system.slice/gleaner.service").
std::optional<std::string> OwnCgroup(std::string_view controller = {});

// Writes a cgroup control file at once; the error names the file.
core::Status WriteCgroupFile(const std::string& path, std::string_view text);

// A control file's first line ("" when it cannot be read).
std::string ReadCgroupFile(const std::string& path);

}  // namespace gleaner::agent
