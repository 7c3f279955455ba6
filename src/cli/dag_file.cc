#include "cli/dag_file.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "config/config_file.h"

namespace gleaner::cli {
namespace {

using nlohmann::json;

// Limits no host narrows: the daemon checks sizes against its own.
const sched::JobLimits kAnyHost{.max_gpus = 1'000'000, .max_nodes = 1'000'000};

constexpr std::pair<const char*, sched::DependencyKind> kAfterKeys[] = {
    {"after", sched::DependencyKind::kAfterOk},
    {"after_any", sched::DependencyKind::kAfterAny},
    {"after_failure", sched::DependencyKind::kAfterNotOk},
};

// A parameter's value as it goes into the environment and the command.
std::string ValueText(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Every combination of the sweep's values: parameters in name order (TOML
// tables keep no order), the last changing fastest, values as listed.
std::vector<std::vector<std::pair<std::string, std::string>>> Combinations(const json& sweep) {
  std::vector<std::vector<std::pair<std::string, std::string>>> out = {{}};
  for (const auto& [param, values] : sweep.items()) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& partial : out) {
      for (const json& v : values) {
        next.push_back(partial);
        next.back().emplace_back(param, ValueText(v));
      }
    }
    out = std::move(next);
  }
  return out;
}

std::string Replaced(std::string text, const std::string& key, const std::string& value) {
  const std::string mark = "{" + key + "}";
  for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at)) {
    text.replace(at, mark.size(), value);
    at += value.size();
  }
  return text;
}

}  // namespace

core::Result<std::vector<DagJob>> ParseDagFile(std::string_view text, const std::string& path) {
  GLEANER_ASSIGN_OR_RETURN(const json doc, config::TomlToJson(text, path));
  for (const auto& [key, value] : doc.items()) {
    if (key != "defaults" && key != "job") {
      return core::InvalidArgument(path + ": unknown table [" + key +
                                   "]; a DAG file has [defaults] and [[job]] tables");
    }
  }
  const json defaults = doc.value("defaults", json::object());
  if (!defaults.is_object()) return core::InvalidArgument(path + ": [defaults] must be a table");
  if (!doc.contains("job") || !doc["job"].is_array() || doc["job"].empty()) {
    return core::InvalidArgument(path + ": no [[job]] tables: nothing to submit");
  }
  // Each [[job]] expanded into its jobs, by the name the file gives it.
  std::map<std::string, std::vector<size_t>> expanded;
  std::vector<std::string> names;  // in the file's order
  std::vector<DagJob> jobs;
  for (const json& table : doc["job"]) {
    if (!table.is_object()) return core::InvalidArgument(path + ": [[job]] must be tables");
    const json given = table.contains("name") ? table["name"] : json();
    const std::string name = given.is_string() ? given.get<std::string>() : "";
    const std::string where = path + ": job " + (name.empty() ? "(unnamed)" : "\"" + name + "\"");
    if (name.empty()) return core::InvalidArgument(where + ": every job needs a name");
    if (expanded.contains(name)) return core::InvalidArgument(where + ": the name is used twice");
    json fields = defaults;
    for (const auto& [key, value] : table.items()) fields[key] = value;
    std::vector<std::pair<sched::DependencyKind, std::string>> after;
    for (const auto& [key, kind] : kAfterKeys) {
      if (!fields.contains(key)) continue;
      const json list = fields[key];
      fields.erase(key);
      if (!list.is_array()) return core::InvalidArgument(where + ": " + key + ": a list of names");
      for (const json& other : list) {
        if (!other.is_string()) {
          return core::InvalidArgument(where + ": " + key + ": a list of job names");
        }
        after.emplace_back(kind, other.get<std::string>());
      }
    }
    json sweep = json::object();
    if (fields.contains("sweep")) {
      sweep = fields["sweep"];
      fields.erase("sweep");
      if (!sweep.is_object()) return core::InvalidArgument(where + ": sweep must be a table");
      // Counted before anything is expanded: a few long lists multiply
      // past any memory.
      size_t combinations = 1;
      for (const auto& [param, values] : sweep.items()) {
        if (!values.is_array() || values.empty()) {
          return core::InvalidArgument(where + ": sweep." + param + ": a list of values");
        }
        if (values.size() > kMaxDagJobs / combinations) {
          return core::InvalidArgument(path + ": more than " + std::to_string(kMaxDagJobs) +
                                       " jobs; split the sweep");
        }
        combinations *= values.size();
      }
    }
    auto spec = sched::JobSpecFromJson(fields);
    if (!spec.ok()) return core::InvalidArgument(where + ": " + spec.status().message());
    for (const auto& combination : Combinations(sweep)) {
      if (jobs.size() >= kMaxDagJobs) {
        return core::InvalidArgument(path + ": more than " + std::to_string(kMaxDagJobs) +
                                     " jobs; split the sweep");
      }
      DagJob job{name, *spec, after};
      std::string label;
      for (const auto& [param, value] : combination) {
        label += (label.empty() ? "" : ",") + param + "=" + value;
        job.spec.env[param] = value;
        for (std::string& arg : job.spec.command) arg = Replaced(arg, param, value);
      }
      job.spec.name = label.empty() ? name : name + "[" + label + "]";
      // Every check a submit makes that needs no host, before any is sent.
      if (core::Status valid = sched::ValidateJobSpec(job.spec, kAnyHost); !valid.ok()) {
        return core::InvalidArgument(path + ": job \"" + job.spec.name + "\": " + valid.message());
      }
      if (expanded[name].empty()) names.push_back(name);
      expanded[name].push_back(jobs.size());
      jobs.push_back(std::move(job));
    }
  }
  // Kahn's order over the file's jobs, the file's order among those ready;
  // what is left at the end is a cycle.
  std::map<std::string, std::set<std::string>> waits_for;
  for (size_t i = 0; i < jobs.size(); ++i) {
    for (const auto& [kind, other] : jobs[i].after) {
      if (!expanded.contains(other)) {
        return core::InvalidArgument(path + ": job \"" + jobs[i].group + "\" waits for \"" + other +
                                     "\", which the file does not name");
      }
      if (other == jobs[i].group) {
        return core::InvalidArgument(path + ": job \"" + other + "\" waits for itself");
      }
      waits_for[jobs[i].group].insert(other);
    }
  }
  std::vector<std::string> order;
  std::set<std::string> placed;
  for (bool progress = true; progress;) {
    progress = false;
    for (const std::string& name : names) {
      if (placed.contains(name)) continue;
      bool ready = true;
      for (const std::string& other : waits_for[name]) ready = ready && placed.contains(other);
      if (!ready) continue;
      placed.insert(name);
      order.push_back(name);
      progress = true;
    }
  }
  if (order.size() != expanded.size()) {
    std::string cycle;
    for (const std::string& name : names) {
      if (!placed.contains(name)) cycle += (cycle.empty() ? "" : ", ") + name;
    }
    return core::InvalidArgument(path + ": the jobs " + cycle + " wait for one another in a cycle");
  }
  std::vector<DagJob> sorted;
  for (const std::string& name : order) {
    for (size_t i : expanded[name]) sorted.push_back(std::move(jobs[i]));
  }
  return sorted;
}

}  // namespace gleaner::cli
