#pragma once

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "views/host_view.h"

namespace gleaner::views {

// The `gleaner gpus --json` document, schema "gleaner.gpus/v1" (docs/gpus-json.md).
// A reading that has no value is null, and its reason is listed under the
// GPU's "unavailable" object, so zero is never confused with "not supported".
nlohmann::json GpusToJson(const HostView& view);

// The view a gleaner.gpus/v1 document was written from (GpusToJson's
// inverse, for the view a daemon serves); the error counters and the
// topology are left out. A document of another schema is an error.
core::Result<HostView> HostViewFromJson(const nlohmann::json& doc);

// A Slurm job as the documents show it: id, user, account, partition, ...
nlohmann::json SlurmJobJson(const slurm::SlurmJob& job);
// A Slurm job on this host with each of its GPUs' verdicts at `now`.
nlohmann::json JobOnHostJson(const slurm::JobOnHost& job, core::TimePoint now);

}  // namespace gleaner::views
