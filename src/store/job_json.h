#pragma once

#include <nlohmann/json.hpp>

#include "store/job_store.h"

namespace gleaner::store {

// A job as the API and `--json` show it (docs/jobs.md).
nlohmann::json JobRecordToJson(const JobRecord& r);

}  // namespace gleaner::store
