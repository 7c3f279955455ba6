#include "slurm/slurm_json.h"

#include <nlohmann/json.hpp>

#include "core/json_depth.h"
#include "slurm/hostlist.h"

namespace gleaner::slurm {
namespace {

using nlohmann::json;

// A number as each version writes it: 7, or {"set": true, "number": 7}.
std::optional<int64_t> Number(const json& job, const char* key) {
  auto it = job.find(key);
  if (it == job.end()) return std::nullopt;
  const json* v = &*it;
  if (v->is_object()) {
    if (!v->value("set", true) || v->value("infinite", false)) return std::nullopt;
    auto n = v->find("number");
    if (n == v->end()) return std::nullopt;
    v = &*n;
  }
  if (v->is_number_integer()) return v->get<int64_t>();
  if (v->is_number_unsigned() && v->get<uint64_t>() <= INT64_MAX) {
    return static_cast<int64_t>(v->get<uint64_t>());
  }
  return std::nullopt;
}

std::string Text(const json& job, const char* key) {
  auto it = job.find(key);
  return it != job.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// "RUNNING", or the first of ["RUNNING", "COMPLETING"] (23.02 on).
std::string State(const json& job) {
  auto it = job.find("job_state");
  if (it == job.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array() && !it->empty() && it->front().is_string()) {
    return it->front().get<std::string>();
  }
  return "";
}

// The job's nodes, in the order its gres_detail lists them.
core::Result<std::vector<std::string>> Nodes(const json& job) {
  std::vector<std::string> names;
  if (auto res = job.find("job_resources"); res != job.end() && res->is_object()) {
    // 22.05: job_resources.allocated_nodes[].nodename;
    // 23.02 on: job_resources.nodes.allocation[].name.
    const json* list = nullptr;
    const char* key = "nodename";
    if (auto a = res->find("allocated_nodes"); a != res->end() && a->is_array()) {
      list = &*a;
    } else if (auto n = res->find("nodes"); n != res->end() && n->is_object()) {
      if (auto al = n->find("allocation"); al != n->end() && al->is_array()) {
        list = &*al;
        key = "name";
      }
    }
    if (list) {
      for (const json& node : *list) {
        if (node.is_object() && node.contains(key) && node[key].is_string()) {
          names.push_back(node[key].get<std::string>());
        }
      }
      if (!names.empty()) return names;
    }
  }
  return ExpandHostlist(Text(job, "nodes"));
}

// "gres/gpu=2" in a TRES string ("cpu=1,node=1,gres/gpu=2"), or 0.
int GpusInTres(const std::string& tres) {
  int count = 0;
  size_t pos = 0;
  while ((pos = tres.find("gres/gpu", pos)) != std::string::npos) {
    const size_t eq = tres.find('=', pos);
    const size_t end = tres.find(',', pos);
    // "gres/gpu=2" counts; "gres/gpu:a100=2" repeats it, by type.
    if (eq != std::string::npos && (end == std::string::npos || eq < end) &&
        tres.compare(pos, eq - pos, "gres/gpu") == 0) {
      try {
        count = std::stoi(tres.substr(eq + 1, end == std::string::npos ? end : end - eq - 1));
      } catch (const std::exception&) {
        count = 0;
      }
    }
    pos = eq == std::string::npos ? tres.size() : eq;
  }
  return count;
}

// 22.05 writes the job's wait status as a number; 23.02 on an object with
// its return code and signal.
void ReadExit(const json& j, SlurmJob* job) {
  auto it = j.find("exit_code");
  if (it == j.end()) return;
  if (it->is_number_integer()) {
    const int64_t status = it->get<int64_t>();
    if (status < 0 || status > 0xffff) return;
    if ((status & 0x7f) != 0) {
      job->exit_signal = static_cast<int>(status & 0x7f);
    } else {
      job->exit_code = static_cast<int>((status >> 8) & 0xff);
    }
  } else if (it->is_object()) {
    if (auto signal = it->find("signal"); signal != it->end() && signal->is_object()) {
      if (auto id = Number(*signal, "id"); id && *id > 0 && *id < 128) {
        job->exit_signal = static_cast<int>(*id);
        return;
      }
    }
    if (auto code = Number(*it, "return_code"); code && *code >= 0 && *code <= 255) {
      job->exit_code = static_cast<int>(*code);
    }
  }
}

core::Result<SlurmJob> ReadJob(const json& j) {
  SlurmJob job;
  const auto id = Number(j, "job_id");
  if (!id) return core::InvalidArgument("it has no job_id");
  job.id = std::to_string(*id);
  const auto array_job = Number(j, "array_job_id");
  const auto array_task = Number(j, "array_task_id");
  if (array_job && *array_job != 0 && array_task) {
    job.array_id = std::to_string(*array_job) + "_" + std::to_string(*array_task);
  }
  job.name = Text(j, "name");
  job.comment = Text(j, "comment");
  job.user = Text(j, "user_name");
  if (auto uid = Number(j, "user_id"); uid && *uid >= 0 && *uid <= UINT32_MAX) {
    job.uid = static_cast<uint32_t>(*uid);
  }
  if (job.user.empty() && job.uid) job.user = std::to_string(*job.uid);
  job.account = Text(j, "account");
  job.partition = Text(j, "partition");
  job.qos = Text(j, "qos");
  job.state = State(j);
  if (auto start = Number(j, "start_time"); start && *start > 0) {
    job.start_time = core::TimePoint(core::Seconds(*start));
  }
  job.restart_count = static_cast<int>(Number(j, "restart_cnt").value_or(0));
  job.state_reason = Text(j, "state_reason");
  ReadExit(j, &job);
  std::vector<std::string> details;
  if (auto g = j.find("gres_detail"); g != j.end() && g->is_array()) {
    for (const json& d : *g) {
      if (d.is_string()) details.push_back(d.get<std::string>());
    }
  }
  if (!details.empty() && job.HoldsResources()) {
    auto nodes = Nodes(j);
    if (!nodes.ok()) return nodes.status();
    if (nodes->size() != details.size()) {
      return core::InvalidArgument("it lists " + std::to_string(details.size()) +
                                   " GRES details for " + std::to_string(nodes->size()) + " nodes");
    }
    for (size_t i = 0; i < details.size(); ++i) {
      auto indices = ParseGresIndices(details[i]);
      if (!indices.ok()) return indices.status();
      if (indices->empty()) continue;
      job.gpu_count += static_cast<int>(indices->size());
      job.gpus_by_node[(*nodes)[i]] = std::move(indices).value();
    }
  }
  if (job.gpu_count == 0) job.gpu_count = GpusInTres(Text(j, "tres_alloc_str"));
  return job;
}

}  // namespace

namespace {

core::Result<SlurmJobsDocument> Parse(std::string_view text) {
  json doc = core::ParseUntrustedJson<json>(text);
  if (doc.is_discarded() || !doc.is_object()) {
    return core::InvalidArgument("Slurm's answer is not a JSON object: \"" +
                                 std::string(text.substr(0, 80)) + "\"");
  }
  if (auto errors = doc.find("errors"); errors != doc.end() && errors->is_array()) {
    std::string words;
    for (const json& e : *errors) {
      if (!e.is_object()) continue;
      std::string what = e.value("description", "");
      if (const std::string error = e.value("error", ""); !error.empty()) {
        what += (what.empty() ? "" : ": ") + error;
      }
      words += (words.empty() ? "" : "; ") + what;
    }
    if (!words.empty()) return core::Unavailable("Slurm answered with errors: " + words);
  }
  auto jobs = doc.find("jobs");
  if (jobs == doc.end() || !jobs->is_array()) {
    return core::InvalidArgument("Slurm's answer has no \"jobs\" list");
  }
  SlurmJobsDocument out;
  if (auto meta = doc.find("meta"); meta != doc.end() && meta->is_object()) {
    const json slurm = meta->value("Slurm", meta->value("slurm", json::object()));
    if (slurm.is_object()) out.slurm_version = slurm.value("release", "");
  }
  for (const json& j : *jobs) {
    if (!j.is_object()) continue;
    auto job = ReadJob(j);
    if (job.ok()) {
      out.jobs.push_back(std::move(job).value());
    } else {
      const auto id = Number(j, "job_id");
      out.skipped.push_back("job " + (id ? std::to_string(*id) : std::string("?")) + ": " +
                            job.status().message());
    }
  }
  return out;
}

}  // namespace

core::Result<SlurmJobsDocument> ParseSlurmJobs(std::string_view text) {
  // A field of the wrong type (a hostile or broken answer) is an error here,
  // never an exception on the poller's thread.
  try {
    return Parse(text);
  } catch (const nlohmann::json::exception& e) {
    return core::InvalidArgument(std::string("Slurm's answer has a field of the wrong type: ") +
                                 e.what());
  }
}

}  // namespace gleaner::slurm
