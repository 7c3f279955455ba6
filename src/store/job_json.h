#pragma once

#include <nlohmann/json.hpp>

#include "store/job_store.h"

namespace gleaner::store {

// A job as the API and `--json` show it (docs/jobs.md).
nlohmann::json JobRecordToJson(const JobRecord& r);

// A spec as the store keeps it, once per task: its size is what a task
// costs against its owner's limits (ActiveUsage::spec_bytes).
std::string StoredSpecText(const sched::JobSpec& spec);

}  // namespace gleaner::store
