#include "agent/process_info.h"

#include <pwd.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace gleaner::agent {

std::string UserName(uint32_t uid) {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? static_cast<size_t>(size) : 16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    return found->pw_name;
  }
  return std::to_string(uid);
}

std::optional<ProcessInfo> ProcfsInspector::Inspect(uint32_t pid) const {
  const std::string dir = proc_root_ + "/" + std::to_string(pid);
  std::ifstream status(dir + "/status");
  if (!status) return std::nullopt;
  ProcessInfo info;
  info.pid = pid;
  std::string line;
  std::string name;
  bool have_uid = false;
  while (std::getline(status, line)) {
    if (line.rfind("Name:", 0) == 0) {
      std::istringstream(line.substr(5)) >> name;
    } else if (line.rfind("Uid:", 0) == 0) {
      // Real, effective, saved, filesystem: the real uid is who started it.
      uint32_t uid = 0;
      have_uid = static_cast<bool>(std::istringstream(line.substr(4)) >> uid);
      info.uid = uid;
    }
  }
  if (!have_uid) return std::nullopt;
  info.user = UserName(*info.uid);

  std::ifstream cmdline(dir + "/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  // Kernel threads and zombies have no command line; show the name as ps does.
  info.command = raw.empty() ? "[" + name + "]" : raw;
  return info;
}

ScenarioProcessInspector::ScenarioProcessInspector(const gpu::Scenario& scenario,
                                                   const ProcessInspector& fallback)
    : fallback_(fallback) {
  for (const gpu::ScenarioGpu& gpu : scenario.gpus) {
    for (const gpu::ScenarioFrame& frame : gpu.timeline) {
      for (const gpu::ScenarioProcess& p : frame.processes) {
        if (p.user.empty() && p.command.empty()) continue;
        declared_[p.pid] = ProcessInfo{p.pid, std::nullopt, p.user, p.command};
      }
    }
  }
}

std::optional<ProcessInfo> ScenarioProcessInspector::Inspect(uint32_t pid) const {
  if (auto it = declared_.find(pid); it != declared_.end()) return it->second;
  return fallback_.Inspect(pid);
}

}  // namespace gleaner::agent
