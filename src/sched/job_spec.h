#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/units.h"
#include "sched/container_spec.h"

namespace gleaner::sched {

using JobId = int64_t;

// Who may take a job's GPUs from it: critical jobs are never preempted,
// opportunistic ones run only on lent (idle) capacity.
enum class PriorityClass { kCritical, kNormal, kOpportunistic };

std::string_view PriorityClassName(PriorityClass c);

// A sweep: one job per index in [first, last] stepping by `step`, at most
// `max_parallel` at once (0: no limit). "0-99%8", "0-98:2", "5".
struct ArraySpec {
  int64_t first = 0;
  int64_t last = 0;
  int64_t step = 1;
  int64_t max_parallel = 0;

  int64_t size() const { return (last - first) / step + 1; }
  bool operator==(const ArraySpec&) const = default;
};

// Parses "FIRST[-LAST][:STEP][%MAX]"; errors say what was expected.
core::Result<ArraySpec> ParseArraySpec(const std::string& text);
std::string ArraySpecToString(const ArraySpec& a);

// What a user asks to run. Durations and sizes carry their units in the
// JSON field names (docs/jobs.md).
struct JobSpec {
  std::vector<std::string> command;  // argv; [0] is looked up in PATH
  std::map<std::string, std::string> env;
  std::string working_dir;  // absolute; empty: the submitter's home
  int gpus = 1;             // on each node
  // A gang over this many nodes, `gpus` on each, all started at once and
  // stopped together (docs/gangs.md); 1: one node.
  int nodes = 1;
  // The gang's nodes all under one rack label; otherwise one rack is only
  // preferred.
  bool one_rack = false;
  // Elastic: up to this many GPUs when idle ones are there (0: exactly
  // `gpus`), and whether the job can restart on fewer when some are taken
  // back (it reads CUDA_VISIBLE_DEVICES anew each start).
  int max_gpus = 0;
  bool can_shrink = false;
  core::Bytes min_gpu_memory;
  // The most GPU memory the job uses per GPU (zero: not said). A job that
  // says may run beside a quiet holder that leaves this much free; it is
  // stopped if it uses more (docs/held-idle.md).
  core::Bytes gpu_memory;
  std::vector<std::string> gpu_models;  // allowed models (substrings of NVML's name); empty: any
  // The host's CPUs (in thousandths: 1500 is one and a half) and memory
  // the job may use; zero: not asked, no limit and nothing set aside. The
  // scheduler places the job only where that much is unclaimed, and the
  // job's cgroup is held to it (docs/jobs.md, "CPUs and memory").
  int64_t cpu_milli = 0;
  core::Bytes memory;
  PriorityClass priority_class = PriorityClass::kNormal;
  int priority = 0;  // within the class, -1000..1000, higher first
  bool preemptible = true;
  int checkpoint_signal = 15;  // SIGTERM
  core::Duration grace = core::Seconds(30);
  std::optional<core::Duration> max_runtime;
  std::optional<core::Duration> expected_runtime;
  std::optional<ArraySpec> array;
  // Start only once these succeeded, ended however, or failed
  // (sched/dependencies.h: Slurm's afterok, afterany, afternotok).
  std::vector<JobId> after_success;
  std::vector<JobId> after_any;
  std::vector<JobId> after_failure;
  // What people call the job (`--job-name`); empty: none.
  std::string name;
  // Slurm's singleton: start only once no earlier job of the same user and
  // name is left queued or running. Needs a name.
  bool singleton = false;
  // An interactive session (`gleaner run --pty`): the job's stdin, stdout
  // and stderr are a pseudo-terminal that the submitter attaches to, not
  // files. One job on one node.
  bool pty = false;
  // Run the command in a container rather than on the host (docs/jobs.md,
  // "Containers"); none: on the host.
  std::optional<ContainerSpec> container;
  std::string project;
  std::map<std::string, std::string> labels;

  bool operator==(const JobSpec&) const = default;
};

// Limits a spec is checked against: what this installation can ever run.
struct JobLimits {
  int max_gpus = 8;   // the most GPUs one job can get on one node
  int max_nodes = 1;  // the most nodes one gang may span
  core::Bytes max_gpu_memory = core::Bytes::GiB(1024);
  int64_t max_cpu_milli = int64_t{4096} * 1000;  // Linux's most CPUs (NR_CPUS)
  core::Bytes max_memory = core::Bytes::GiB(uint64_t{64} * 1024);
  core::Duration max_runtime = core::Seconds(int64_t{30} * 24 * 3600);
  int64_t max_array_size = 100'000;
};

// Longest texts a spec may hold: one argv or environment string as the
// kernel takes it (MAX_ARG_STRLEN less its NUL), a path (PATH_MAX) and its
// components (NAME_MAX), and names (project, labels, models, variables).
inline constexpr size_t kMaxArgumentBytes = 128 * 1024 - 1;
inline constexpr size_t kMaxPathBytes = 4095;
inline constexpr size_t kMaxPathComponentBytes = 255;
inline constexpr size_t kMaxNameBytes = 256;

// Checks everything a submit must satisfy; the error names the field and
// says what would be accepted.
core::Status ValidateJobSpec(const JobSpec& spec, const JobLimits& limits);

// The JSON form used by the API and the store. FromJson rejects unknown
// fields and wrong types with the field's name; it does not validate
// values (ValidateJobSpec does).
nlohmann::json JobSpecToJson(const JobSpec& spec);
core::Result<JobSpec> JobSpecFromJson(const nlohmann::json& j);

}  // namespace gleaner::sched
