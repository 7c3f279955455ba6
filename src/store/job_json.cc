#include "store/job_json.h"

#include "core/civil_time.h"
#include "observe/verdict_json.h"

namespace gleaner::store {

nlohmann::json JobRecordToJson(const JobRecord& r) {
  using nlohmann::json;
  json gpus = json::array();
  for (const core::GpuUuid& g : r.gpus) gpus.push_back(g.str());
  const auto time = [](const std::optional<core::TimePoint>& t) {
    return t ? json(core::Rfc3339(*t)) : json(nullptr);
  };
  return {
      {"id", r.id},
      {"user", r.user},
      {"uid", r.uid},
      {"state", JobStateName(r.state)},
      {"attempts", r.attempts},
      {"submitted_at", core::Rfc3339(r.submitted_at)},
      {"started_at", time(r.started_at)},
      {"finished_at", time(r.finished_at)},
      {"gpus", gpus},
      {"exit_code", r.exit_code ? json(*r.exit_code) : json(nullptr)},
      {"reason", r.reason},
      {"pid", r.pid ? json(*r.pid) : json(nullptr)},
      {"array_id", r.array_id ? json(*r.array_id) : json(nullptr)},
      {"array_index", r.array_id ? json(r.array_index) : json(nullptr)},
      {"spec", sched::JobSpecToJson(r.spec)},
  };
}

std::string StoredSpecText(const sched::JobSpec& spec) {
  // Replaces what is not UTF-8 rather than throwing: a spec's strings were
  // checked at submit, and a record must never fail to save over one.
  return sched::JobSpecToJson(spec).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gleaner::store
