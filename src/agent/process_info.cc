#include "agent/process_info.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "core/mutex.h"

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

std::optional<uint32_t> UserId(const std::string& name) {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? static_cast<size_t>(size) : 16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwnam_r(name.c_str(), &entry, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    return found->pw_uid;
  }
  return std::nullopt;
}

namespace {

// /proc/<pid>/stat's fields from the third (the state) on: field N is
// at N - 3. Empty when the process is gone. The command name before them
// may hold spaces and ')'.
std::vector<std::string> StatFields(const std::string& stat_path) {
  std::ifstream stat_file(stat_path);
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 > stat.size()) return {};
  std::istringstream in(stat.substr(close + 2));
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(std::move(f));
  return fields;
}

// Field `n` of /proc/<pid>/stat as a number, if it is one.
std::optional<unsigned long long> StatNumber(const std::vector<std::string>& fields, size_t n) {
  if (n < 3 || n - 3 >= fields.size()) return std::nullopt;
  const std::string& f = fields[n - 3];
  if (f.empty() || f.find_first_not_of("0123456789") != std::string::npos || f.size() > 19) {
    return std::nullopt;
  }
  return std::stoull(f);
}

// Field 6: the session, which a process can leave (setsid) but never join
// from outside.
std::optional<uint32_t> SessionOf(const std::vector<std::string>& stat) {
  const std::optional<unsigned long long> session = StatNumber(stat, 6);
  if (!session || *session == 0 || *session > 4194304) return std::nullopt;
  return static_cast<uint32_t>(*session);
}

// /proc/stat's btime, the boot time in seconds; -1 when unreadable. Read
// once per proc root: it changes only with a reboot, and /proc/stat is
// long on a many-core host while every process of every pass needs it.
long long BootSeconds(const std::string& proc_root) {
  static core::Mutex mu;
  static std::map<std::string, long long> known GLEANER_GUARDED_BY(mu);
  core::MutexLock lock(mu);
  if (auto it = known.find(proc_root); it != known.end()) return it->second;
  std::ifstream proc_stat(proc_root + "/stat");
  std::string line;
  long long boot_s = -1;
  while (std::getline(proc_stat, line)) {
    if (line.rfind("btime ", 0) == 0) boot_s = std::strtoll(line.c_str() + 6, nullptr, 10);
  }
  if (boot_s > 0) known[proc_root] = boot_s;
  return boot_s;
}

// Field 22: the start time in clock ticks after boot.
std::optional<core::TimePoint> StartTimeOf(const std::vector<std::string>& stat,
                                           const std::string& proc_root) {
  const std::optional<unsigned long long> ticks = StatNumber(stat, 22);
  if (!ticks) return std::nullopt;
  const long long boot_s = BootSeconds(proc_root);
  const long hz = sysconf(_SC_CLK_TCK);
  if (boot_s <= 0 || hz <= 0) return std::nullopt;
  const auto us =
      static_cast<int64_t>(boot_s) * 1'000'000 + static_cast<int64_t>(*ticks) * 1'000'000 / hz;
  return core::FromUnixMicros(us);
}

}  // namespace

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
  // One read of /proc/<pid>/stat for the start time and the session.
  const std::vector<std::string> stat = StatFields(dir + "/stat");
  info.started_at = StartTimeOf(stat, proc_root_);
  info.session_id = SessionOf(stat);

  std::ifstream cgroup(dir + "/cgroup");
  const std::string cgroup_text((std::istreambuf_iterator<char>(cgroup)),
                                std::istreambuf_iterator<char>());
  CgroupPlacement placement = ParseCgroup(cgroup_text);
  info.container_id = std::move(placement.container_id);
  info.systemd_unit = std::move(placement.systemd_unit);
  info.slurm_job_id = std::move(placement.slurm_job_id);
  info.kubernetes_pod_uid = std::move(placement.kubernetes_pod_uid);

  std::ifstream environ(dir + "/environ", std::ios::binary);
  std::string entry;
  std::string slurm_job_from_env;
  while (std::getline(environ, entry, '\0')) {
    if (entry.rfind("GLEANER_JOB_ID=", 0) == 0) {
      info.gleaner_job = true;
      info.gleaner_job_id = entry.substr(15);
    } else if (entry.rfind("SLURM_JOB_ID=", 0) == 0) {
      slurm_job_from_env = entry.substr(13);
    }
  }
  // Sites with proctrack/linuxproc give a job no cgroup; its processes
  // carry the id in their environment instead. The cgroup, where there is
  // one, is the kernel's word and wins; a number is all we take.
  if (info.slurm_job_id.empty() && !slurm_job_from_env.empty() && slurm_job_from_env.size() <= 20 &&
      std::all_of(slurm_job_from_env.begin(), slurm_job_from_env.end(),
                  [](unsigned char c) { return std::isdigit(c) != 0; })) {
    info.slurm_job_id = std::move(slurm_job_from_env);
  }
  return info;
}

std::vector<uint32_t> ProcessesOfSession(uint32_t session, const std::string& proc_root) {
  std::vector<uint32_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc_root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (SessionOf(StatFields(entry.path().string() + "/stat")) == session) {
      out.push_back(static_cast<uint32_t>(std::stoul(name)));
    }
  }
  return out;
}

std::optional<core::TimePoint> ProcessStartTime(uint32_t pid, const std::string& proc_root) {
  return StartTimeOf(StatFields(proc_root + "/" + std::to_string(pid) + "/stat"), proc_root);
}

std::optional<core::Duration> ProcessCpuTime(uint32_t pid, const std::string& proc_root) {
  const std::vector<std::string> fields =
      StatFields(proc_root + "/" + std::to_string(pid) + "/stat");
  const std::optional<unsigned long long> user = StatNumber(fields, 14);
  const std::optional<unsigned long long> system = StatNumber(fields, 15);
  const long hz = sysconf(_SC_CLK_TCK);
  if (!user || !system || hz <= 0) return std::nullopt;
  return core::Duration(
      static_cast<int64_t>((*user + *system) * 1'000'000 / static_cast<unsigned long long>(hz)));
}

namespace {

bool IsHex(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

}  // namespace

CgroupPlacement ParseCgroup(const std::string& text) {
  CgroupPlacement out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    // "hierarchy-id:controllers:path"; cgroup v2 has one line "0::/path".
    const size_t colon = line.find(':', line.find(':') + 1);
    if (colon == std::string::npos) continue;
    std::istringstream parts(line.substr(colon + 1));
    std::string part;
    // Only below Slurm's own cgroup (v1 "slurm" or "slurm_<node>", v2
    // "slurmstepd.scope") is "job_N" Slurm's word: users may name cgroups
    // they were delegated as they like.
    bool under_slurm = false;
    while (std::getline(parts, part, '/')) {
      if (part.empty()) continue;
      if (part == "slurm" || part.rfind("slurm_", 0) == 0 || part == "slurmstepd.scope") {
        under_slurm = true;
      }
      std::string name = part;
      for (const char* suffix : {".scope", ".service", ".slice"}) {
        const std::string s(suffix);
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
          if (s != ".slice") out.systemd_unit = part;
          name.resize(name.size() - s.size());
        }
      }
      // docker-<id>, cri-containerd-<id>, crio-<id>, libpod-<id>, or a bare
      // 64-hex directory (cgroupfs driver).
      const size_t dash = name.rfind('-');
      const std::string tail = dash == std::string::npos ? name : name.substr(dash + 1);
      if (tail.size() == 64 && IsHex(tail)) out.container_id = tail;
      if (under_slurm && name.rfind("job_", 0) == 0) out.slurm_job_id = name.substr(4);
      // "kubepods-burstable-pod<uid>" (systemd) or "pod<uid>" (cgroupfs),
      // the uid a UUID with '-' or '_'.
      const size_t pod = name.rfind("pod");
      if (pod != std::string::npos && (pod == 0 || name[pod - 1] == '-') &&
          name.size() == pod + 3 + 36) {
        std::string uid = name.substr(pod + 3);
        std::replace(uid.begin(), uid.end(), '_', '-');
        const bool uuid_shaped = std::all_of(uid.begin(), uid.end(), [](unsigned char c) {
          return std::isxdigit(c) != 0 || c == '-';
        });
        if (uuid_shaped) out.kubernetes_pod_uid = uid;
      }
    }
  }
  return out;
}

ScenarioProcessInspector::ScenarioProcessInspector(const gpu::Scenario& scenario,
                                                   const ProcessInspector& fallback)
    : fallback_(fallback) {
  for (const gpu::ScenarioGpu& gpu : scenario.gpus) {
    for (const gpu::ScenarioFrame& frame : gpu.timeline) {
      for (const gpu::ScenarioProcess& p : frame.processes) {
        if (p.user.empty() && p.command.empty()) continue;
        ProcessInfo info;
        info.pid = p.pid;
        info.user = p.user;
        info.command = p.command;
        declared_[p.pid] = std::move(info);
      }
    }
  }
}

std::optional<ProcessInfo> ScenarioProcessInspector::Inspect(uint32_t pid) const {
  if (auto it = declared_.find(pid); it != declared_.end()) return it->second;
  return fallback_.Inspect(pid);
}

}  // namespace gleaner::agent
