#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/units.h"
#include "gpu/scenario.h"

namespace gleaner::agent {

// Who runs a process, and where, as the host sees it.
struct ProcessInfo {
  uint32_t pid = 0;
  std::optional<uint32_t> uid;  // absent for scenario processes
  std::string user;             // login name; the uid as text when it has none
  std::string command;          // the command line, arguments separated by spaces
  std::optional<core::TimePoint> started_at;
  std::string container_id;  // Docker, containerd, CRI-O or Podman, from the cgroup
  std::string systemd_unit;  // "jupyter.service", "session-4.scope"
  std::string slurm_job_id;
  std::string kubernetes_pod_uid;
  // GLEANER_JOB_ID in its environment: what the process claims, not proof
  // (anyone can set it). The sampler believes it only of a process in the
  // session gleaner started the job in.
  bool gleaner_job = false;
  std::string gleaner_job_id;          // the variable's value
  std::optional<uint32_t> session_id;  // /proc/<pid>/stat's session
};

// What a process's /proc/<pid>/cgroup says about where it runs.
struct CgroupPlacement {
  std::string container_id;
  std::string systemd_unit;
  std::string slurm_job_id;
  std::string kubernetes_pod_uid;
};
CgroupPlacement ParseCgroup(const std::string& cgroup_file_text);

// Looks processes up by host PID. Implementations are thread-safe.
class ProcessInspector {
 public:
  virtual ~ProcessInspector() = default;
  // nullopt when the process is gone or not visible (another PID namespace).
  virtual std::optional<ProcessInfo> Inspect(uint32_t pid) const = 0;
};

// Reads /proc/<pid>/{status,cmdline,stat,cgroup,environ} under `proc_root`
// (default /proc; tests point it at a directory of their own). The
// environment is readable only for the caller's own processes, or as root.
class ProcfsInspector final : public ProcessInspector {
 public:
  explicit ProcfsInspector(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}
  std::optional<ProcessInfo> Inspect(uint32_t pid) const override;

 private:
  std::string proc_root_;
};

// Answers for the processes a scenario declares (their pids are made up),
// and asks `fallback` about the rest. `fallback` must outlive this.
class ScenarioProcessInspector final : public ProcessInspector {
 public:
  ScenarioProcessInspector(const gpu::Scenario& scenario, const ProcessInspector& fallback);
  std::optional<ProcessInfo> Inspect(uint32_t pid) const override;

 private:
  std::unordered_map<uint32_t, ProcessInfo> declared_;
  const ProcessInspector& fallback_;
};

// The processes of session `session` (/proc/<pid>/stat's field 6), its
// leader included: every process an interactive shell started, whatever
// process group job control moved it to.
std::vector<uint32_t> ProcessesOfSession(uint32_t session, const std::string& proc_root = "/proc");

// When process `pid` started, from /proc (under `proc_root`); nullopt when
// it is gone. With the pid, it names a process unambiguously: pids are
// reused, start times are not.
std::optional<core::TimePoint> ProcessStartTime(uint32_t pid,
                                                const std::string& proc_root = "/proc");

// The CPU time process `pid` has used (utime + stime), nullopt when it is
// gone: a parked holder using the CPU again has woken (docs/held-idle.md).
std::optional<core::Duration> ProcessCpuTime(uint32_t pid, const std::string& proc_root = "/proc");

// The login name for `uid`, or the number as text.
std::string UserName(uint32_t uid);
// The uid of a local user; nullopt when there is none by that name.
std::optional<uint32_t> UserId(const std::string& name);

}  // namespace gleaner::agent
