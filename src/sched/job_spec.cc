#include "sched/job_spec.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include "core/enum_names.h"

namespace gleaner::sched {
namespace {

using nlohmann::json;

core::Status Bad(const std::string& field, const std::string& what) {
  return core::InvalidArgument(field + ": " + what);
}

bool ParseInt(const std::string& text, int64_t* out) {
  if (text.empty() || text.size() > 12) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size() || v < 0) return false;
  *out = v;
  return true;
}

// An integer field, whole and within [min, max]. nlohmann's get<int> would
// wrap 4294967305 to 9 (SIGKILL) and cut 5.9 to 5 without a word.
core::Status GetInt(const json& j, const char* key, int64_t min, int64_t max, int* out) {
  if (!j.contains(key) || j.at(key).is_null()) return core::Status::Ok();
  const json& v = j.at(key);
  const std::string range = "from " + std::to_string(min) + " to " + std::to_string(max);
  if (!v.is_number_integer()) return Bad(key, "a whole number " + range);
  if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(max)
                             : (v.get<int64_t>() < min || v.get<int64_t>() > max)) {
    return Bad(key, range + ", got " + v.dump());
  }
  *out = static_cast<int>(v.get<int64_t>());
  return core::Status::Ok();
}

// A text field: no NUL (the kernel would cut the string there, so what
// runs would differ from what was stored) and no longer than `max_bytes`.
core::Status CheckText(const std::string& field, const std::string& text, size_t max_bytes) {
  if (text.find('\0') != std::string::npos) return Bad(field, "contains a NUL byte");
  if (text.size() > max_bytes) {
    return Bad(field, std::to_string(text.size()) + " bytes; at most " + std::to_string(max_bytes));
  }
  return core::Status::Ok();
}

// The working directory: absolute, and a path the kernel can resolve
// (PATH_MAX, NAME_MAX per component): a longer one can never be entered.
core::Status CheckWorkingDir(const std::string& dir) {
  GLEANER_RETURN_IF_ERROR(CheckText("working_dir", dir, kMaxPathBytes));
  if (dir.empty()) return core::Status::Ok();
  if (dir[0] != '/') return Bad("working_dir", "must be an absolute path, got \"" + dir + "\"");
  size_t start = 1;
  while (start < dir.size()) {
    size_t end = dir.find('/', start);
    if (end == std::string::npos) end = dir.size();
    if (end - start > kMaxPathComponentBytes) {
      return Bad("working_dir", "a path component is longer than " +
                                    std::to_string(kMaxPathComponentBytes) + " bytes");
    }
    start = end + 1;
  }
  return core::Status::Ok();
}

// Seconds in JSON, a Duration inside.
core::Duration FromSeconds(double s) {
  return core::Duration(static_cast<int64_t>(std::llround(s * 1e6)));
}

}  // namespace

constexpr auto kPriorityClassNames = core::MakeEnumNames<PriorityClass>(
    {
        {PriorityClass::kCritical, "critical"},
        {PriorityClass::kNormal, "normal"},
        {PriorityClass::kOpportunistic, "opportunistic"},
    },
    "normal");

std::string_view PriorityClassName(PriorityClass c) { return kPriorityClassNames.Name(c); }

core::Result<ArraySpec> ParseArraySpec(const std::string& text) {
  const std::string expected =
      "expected FIRST[-LAST][:STEP][%MAX], like 0-99%8 or 0-98:2, got \"" + text + "\"";
  ArraySpec a;
  std::string rest = text;
  if (const size_t pct = rest.find('%'); pct != std::string::npos) {
    if (!ParseInt(rest.substr(pct + 1), &a.max_parallel) || a.max_parallel == 0) {
      return Bad("array", expected);
    }
    rest.resize(pct);
  }
  if (const size_t colon = rest.find(':'); colon != std::string::npos) {
    if (!ParseInt(rest.substr(colon + 1), &a.step) || a.step == 0) return Bad("array", expected);
    rest.resize(colon);
  }
  if (const size_t dash = rest.find('-'); dash != std::string::npos) {
    if (!ParseInt(rest.substr(0, dash), &a.first) || !ParseInt(rest.substr(dash + 1), &a.last)) {
      return Bad("array", expected);
    }
  } else {
    if (!ParseInt(rest, &a.first)) return Bad("array", expected);
    a.last = a.first;
  }
  if (a.last < a.first) {
    return Bad("array", "the last index (" + std::to_string(a.last) + ") is before the first (" +
                            std::to_string(a.first) + ")");
  }
  return a;
}

std::string ArraySpecToString(const ArraySpec& a) {
  std::string out = std::to_string(a.first);
  if (a.last != a.first) out += "-" + std::to_string(a.last);
  if (a.step != 1) out += ":" + std::to_string(a.step);
  if (a.max_parallel != 0) out += "%" + std::to_string(a.max_parallel);
  return out;
}

core::Status ValidateJobSpec(const JobSpec& s, const JobLimits& limits) {
  if (s.command.empty() || s.command[0].empty()) {
    return Bad("command",
               "empty; give the program and its arguments, like [\"python\", \"train.py\"]");
  }
  for (const std::string& arg : s.command) {
    GLEANER_RETURN_IF_ERROR(CheckText("command", arg, kMaxArgumentBytes));
  }
  GLEANER_RETURN_IF_ERROR(CheckWorkingDir(s.working_dir));
  for (const auto& [key, value] : s.env) {
    if (key.empty() || key.find('=') != std::string::npos || key.find('\0') != std::string::npos ||
        key.size() > kMaxNameBytes) {
      return Bad("env", "\"" + key.substr(0, 64) + "\" is not a variable name");
    }
    GLEANER_RETURN_IF_ERROR(CheckText("env " + key, value, kMaxArgumentBytes));
    if (key == "CUDA_VISIBLE_DEVICES") {
      return Bad("env", "CUDA_VISIBLE_DEVICES is set by gleaner to the GPUs it assigns");
    }
  }
  if (s.gpus < 1) return Bad("gpus", "at least 1, got " + std::to_string(s.gpus));
  if (s.max_gpus != 0 && (s.max_gpus < s.gpus || s.max_gpus > limits.max_gpus)) {
    return Bad("max_gpus", "from gpus (" + std::to_string(s.gpus) + ") to " +
                               std::to_string(limits.max_gpus) + ", or 0 for exactly gpus; got " +
                               std::to_string(s.max_gpus));
  }
  if (s.can_shrink && s.max_gpus <= s.gpus) {
    return Bad("can_shrink", "only for an elastic job (max_gpus above gpus)");
  }
  if (s.gpus > limits.max_gpus) {
    return Bad("gpus", std::to_string(s.gpus) + " GPUs, but no host here has more than " +
                           std::to_string(limits.max_gpus));
  }
  if (s.nodes < 1 || s.nodes > limits.max_nodes) {
    return Bad("nodes",
               std::to_string(s.nodes) + (s.nodes < 1 ? "; at least 1" : "") +
                   (s.nodes > limits.max_nodes
                        ? " nodes, but jobs here span at most " + std::to_string(limits.max_nodes) +
                              (limits.max_nodes == 1 ? " (one host: gleaner up)" : "")
                        : ""));
  }
  if (s.nodes > 1 && s.max_gpus != 0) {
    return Bad("max_gpus", "a gang over several nodes has a fixed size; drop max_gpus or nodes");
  }
  if (s.one_rack && s.nodes == 1) return Bad("one_rack", "only for a gang (nodes above 1)");
  if (s.min_gpu_memory > limits.max_gpu_memory) {
    return Bad("min_gpu_memory_bytes", "more than any GPU here has");
  }
  if (s.gpu_memory > limits.max_gpu_memory) {
    return Bad("gpu_memory_bytes", "more than any GPU here has");
  }
  if (s.cpu_milli < 0 || s.cpu_milli > limits.max_cpu_milli) {
    return Bad("cpus", "from 0.001 to " + std::to_string(limits.max_cpu_milli / 1000) +
                           " CPUs, or 0 for no limit");
  }
  if (s.memory > limits.max_memory) {
    return Bad("memory_bytes", "more than any host here has (at most " +
                                   std::to_string(limits.max_memory.count() >> 30) + " GiB)");
  }
  if (s.priority < -1000 || s.priority > 1000) {
    return Bad("priority", "from -1000 to 1000, got " + std::to_string(s.priority));
  }
  if (s.priority_class == PriorityClass::kCritical && s.preemptible) {
    return Bad("preemptible", "critical jobs are never preempted; set preemptible to false");
  }
  if (s.priority_class == PriorityClass::kOpportunistic && !s.preemptible) {
    return Bad("preemptible", "opportunistic jobs run on lent GPUs and must be preemptible");
  }
  if (s.checkpoint_signal < 1 || s.checkpoint_signal > 64) {
    return Bad("checkpoint_signal",
               "a signal number from 1 to 64, got " + std::to_string(s.checkpoint_signal));
  }
  if (s.grace < core::Duration{} || s.grace > core::Seconds(3600)) {
    return Bad("grace_s", "from 0 to 3600 seconds");
  }
  for (const auto& [field, d] : {std::pair{"max_runtime_s", s.max_runtime},
                                 std::pair{"expected_runtime_s", s.expected_runtime}}) {
    if (d && (*d <= core::Duration{} || *d > limits.max_runtime)) {
      return Bad(field, "more than 0 and at most " +
                            std::to_string(limits.max_runtime.count() / 1'000'000) + " seconds");
    }
  }
  if (s.max_runtime && s.expected_runtime && *s.expected_runtime > *s.max_runtime) {
    return Bad("expected_runtime_s", "longer than max_runtime_s");
  }
  if (s.array) {
    if (s.array->last < s.array->first || s.array->step < 1 || s.array->max_parallel < 0) {
      return Bad("array", "not a valid range");
    }
    if (s.array->size() > limits.max_array_size) {
      return Bad("array", std::to_string(s.array->size()) + " jobs; at most " +
                              std::to_string(limits.max_array_size) + " per array");
    }
  }
  for (const std::string& model : s.gpu_models) {
    GLEANER_RETURN_IF_ERROR(CheckText("gpu_models", model, kMaxNameBytes));
  }
  GLEANER_RETURN_IF_ERROR(CheckText("project", s.project, kMaxNameBytes));
  GLEANER_RETURN_IF_ERROR(CheckText("name", s.name, kMaxNameBytes));
  // Shown in tables and logs: no control character may forge a line there.
  if (std::any_of(s.name.begin(), s.name.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    return Bad("name", "printable characters only");
  }
  if (s.singleton && s.name.empty()) {
    return Bad("singleton",
               "a singleton job needs a name (name, --job-name): it waits for the "
               "earlier jobs of that name");
  }
  if (s.pty && (s.array || s.nodes != 1 || s.max_gpus > s.gpus || s.can_shrink)) {
    return Bad("pty",
               "an interactive session is one job on one node: no array, no gang, and not "
               "elastic (a resize restarts a job, which would end the session)");
  }
  if (s.container) {
    GLEANER_RETURN_IF_ERROR(ValidateContainerSpec(*s.container));
    if (s.pty) {
      return Bad("pty", "an interactive session runs on the host; it cannot be in a container");
    }
  }
  for (const auto& [key, value] : s.labels) {
    GLEANER_RETURN_IF_ERROR(CheckText("labels", key, kMaxNameBytes));
    GLEANER_RETURN_IF_ERROR(CheckText("labels " + key.substr(0, 64), value, kMaxNameBytes));
  }
  // One dependency per job: "after it succeeded" and "after it failed"
  // together could never both be met.
  std::set<JobId> deps;
  for (const auto& [field, ids] :
       {std::pair{"after_success", &s.after_success}, std::pair{"after_any", &s.after_any},
        std::pair{"after_failure", &s.after_failure}}) {
    for (JobId id : *ids) {
      if (id <= 0) return Bad(field, "job ids are positive, got " + std::to_string(id));
      if (!deps.insert(id).second) {
        return Bad(field, "names job " + std::to_string(id) + " twice (one dependency per job)");
      }
    }
  }
  return core::Status::Ok();
}

json JobSpecToJson(const JobSpec& s) {
  json j = {
      {"command", s.command},
      {"env", s.env},
      {"working_dir", s.working_dir},
      {"gpus", s.gpus},
      {"max_gpus", s.max_gpus},
      {"can_shrink", s.can_shrink},
      {"min_gpu_memory_bytes", s.min_gpu_memory.count()},
      {"gpu_memory_bytes", s.gpu_memory.count()},
      {"gpu_models", s.gpu_models},
      {"priority_class", PriorityClassName(s.priority_class)},
      {"priority", s.priority},
      {"preemptible", s.preemptible},
      {"checkpoint_signal", s.checkpoint_signal},
      {"grace_s", core::ToSecondsDouble(s.grace)},
      {"max_runtime_s",
       s.max_runtime ? json(core::ToSecondsDouble(*s.max_runtime)) : json(nullptr)},
      {"expected_runtime_s",
       s.expected_runtime ? json(core::ToSecondsDouble(*s.expected_runtime)) : json(nullptr)},
      {"array", s.array ? json(ArraySpecToString(*s.array)) : json(nullptr)},
      {"after_success", s.after_success},
      {"project", s.project},
      {"labels", s.labels},
  };
  // Only jobs that use them say so: other jobs' JSON stays as it was.
  if (!s.after_any.empty()) j["after_any"] = s.after_any;
  if (!s.after_failure.empty()) j["after_failure"] = s.after_failure;
  if (!s.name.empty()) j["name"] = s.name;
  if (s.singleton) j["singleton"] = true;
  if (s.pty) j["pty"] = true;
  if (s.container) j["container"] = ContainerSpecToJson(*s.container);
  // Only gangs say so: a one-node job's JSON stays as it always was.
  if (s.nodes != 1) j["nodes"] = s.nodes;
  if (s.one_rack) j["one_rack"] = true;
  // Only jobs that ask for host resources say so.
  if (s.cpu_milli != 0) j["cpus"] = static_cast<double>(s.cpu_milli) / 1000;
  if (s.memory.count() != 0) j["memory_bytes"] = s.memory.count();
  return j;
}

core::Result<JobSpec> JobSpecFromJson(const json& j) {
  if (!j.is_object()) return core::InvalidArgument("a job must be a JSON object");
  static const std::set<std::string> kFields = {"command",
                                                "env",
                                                "working_dir",
                                                "gpus",
                                                "nodes",
                                                "one_rack",
                                                "max_gpus",
                                                "can_shrink",
                                                "min_gpu_memory_bytes",
                                                "gpu_memory_bytes",
                                                "gpu_models",
                                                "cpus",
                                                "memory_bytes",
                                                "priority_class",
                                                "priority",
                                                "preemptible",
                                                "checkpoint_signal",
                                                "grace_s",
                                                "max_runtime_s",
                                                "expected_runtime_s",
                                                "array",
                                                "after_success",
                                                "after_any",
                                                "after_failure",
                                                "name",
                                                "singleton",
                                                "pty",
                                                "container",
                                                "project",
                                                "labels"};
  for (const auto& [key, unused] : j.items()) {
    if (!kFields.contains(key)) {
      std::string list;
      for (const std::string& f : kFields) list += (list.empty() ? "" : ", ") + f;
      return Bad(key, "unknown field; known fields: " + list);
    }
  }
  JobSpec s;
  try {
    const auto get = [&](const char* key, auto* out) {
      if (j.contains(key) && !j.at(key).is_null()) j.at(key).get_to(*out);
    };
    if (!j.contains("command") || !j.at("command").is_array()) {
      return Bad("command", "required: a list of strings, the program and its arguments");
    }
    for (const json& arg : j.at("command")) {
      if (!arg.is_string()) return Bad("command", "every argument must be a string");
      s.command.push_back(arg.get<std::string>());
    }
    get("env", &s.env);
    get("working_dir", &s.working_dir);
    GLEANER_RETURN_IF_ERROR(GetInt(j, "gpus", -1'000'000, 1'000'000, &s.gpus));
    GLEANER_RETURN_IF_ERROR(GetInt(j, "nodes", -1'000'000, 1'000'000, &s.nodes));
    get("one_rack", &s.one_rack);
    GLEANER_RETURN_IF_ERROR(GetInt(j, "max_gpus", 0, 1'000'000, &s.max_gpus));
    get("can_shrink", &s.can_shrink);
    for (const auto& [key, out] :
         {std::pair{"min_gpu_memory_bytes", &s.min_gpu_memory},
          std::pair{"gpu_memory_bytes", &s.gpu_memory}, std::pair{"memory_bytes", &s.memory}}) {
      if (!j.contains(key)) continue;
      if (!j.at(key).is_number_unsigned()) {
        return Bad(key, "a whole, non-negative number of bytes");
      }
      *out = core::Bytes(j.at(key).get<uint64_t>());
    }
    get("gpu_models", &s.gpu_models);
    if (j.contains("cpus") && !j.at("cpus").is_null()) {
      const json& cpus = j.at("cpus");
      const double v = cpus.is_number() ? cpus.get<double>() : -1;
      // Thousandths, as the kernel's cpu.max can hold them; a finer
      // fraction is a mistake, not a wish.
      if (!(v >= 0 && v <= 1e6) || std::abs(v * 1000 - std::round(v * 1000)) > 1e-6) {
        return Bad("cpus", "a non-negative number of CPUs in thousandths, like 2 or 0.5");
      }
      s.cpu_milli = std::llround(v * 1000);
    }
    if (j.contains("priority_class")) {
      const std::string c = j.at("priority_class").get<std::string>();
      const std::optional<PriorityClass> parsed = kPriorityClassNames.Parse(c);
      if (!parsed) {
        return Bad("priority_class",
                   "one of " + kPriorityClassNames.List(", ") + "; got \"" + c + "\"");
      }
      s.priority_class = *parsed;
      // The default that fits; an explicit true is an error.
      if (*parsed == PriorityClass::kCritical) s.preemptible = false;
    }
    GLEANER_RETURN_IF_ERROR(GetInt(j, "priority", -1000, 1000, &s.priority));
    get("preemptible", &s.preemptible);
    GLEANER_RETURN_IF_ERROR(GetInt(j, "checkpoint_signal", 1, 64, &s.checkpoint_signal));
    if (j.contains("grace_s") && !j.at("grace_s").is_null()) {
      if (!j.at("grace_s").is_number()) return Bad("grace_s", "a number of seconds");
      const double v = j.at("grace_s").get<double>();
      if (!std::isfinite(v) || std::abs(v) > 1e12)
        return Bad("grace_s", "not a plausible duration");
      s.grace = FromSeconds(v);
    }
    for (const auto& [key, out] : {std::pair{"max_runtime_s", &s.max_runtime},
                                   std::pair{"expected_runtime_s", &s.expected_runtime}}) {
      if (j.contains(key) && !j.at(key).is_null()) {
        if (!j.at(key).is_number()) return Bad(key, "a number of seconds");
        const double v = j.at(key).get<double>();
        if (!std::isfinite(v) || std::abs(v) > 1e12) return Bad(key, "not a plausible duration");
        *out = FromSeconds(v);
      }
    }
    if (j.contains("array") && !j.at("array").is_null()) {
      if (!j.at("array").is_string()) return Bad("array", "a string like \"0-99%8\"");
      GLEANER_ASSIGN_OR_RETURN(ArraySpec a, ParseArraySpec(j.at("array").get<std::string>()));
      s.array = a;
    }
    for (const auto& [field, ids] :
         {std::pair{"after_success", &s.after_success}, std::pair{"after_any", &s.after_any},
          std::pair{"after_failure", &s.after_failure}}) {
      if (!j.contains(field) || j.at(field).is_null()) continue;
      const json& deps = j.at(field);
      if (!deps.is_array()) return Bad(field, "a list of job ids");
      for (const json& id : deps) {
        if (!id.is_number_integer()) return Bad(field, "job ids are whole numbers");
        ids->push_back(id.get<JobId>());
      }
    }
    get("name", &s.name);
    get("singleton", &s.singleton);
    get("pty", &s.pty);
    if (j.contains("container") && !j.at("container").is_null()) {
      GLEANER_ASSIGN_OR_RETURN(s.container, ContainerSpecFromJson(j.at("container")));
    }
    get("project", &s.project);
    get("labels", &s.labels);
  } catch (const json::exception& e) {
    // Wrong types: nlohmann names the type it wanted.
    return core::InvalidArgument(std::string("wrong type in job: ") + e.what());
  }
  return s;
}

}  // namespace gleaner::sched
