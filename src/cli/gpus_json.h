#pragma once

#include <nlohmann/json.hpp>

#include "cli/host_view.h"

namespace gleaner::cli {

// The `gleaner gpus --json` document, schema "gleaner.gpus/v1" (docs/gpus-json.md).
// A reading that has no value is null, and its reason is listed under the
// GPU's "unavailable" object, so zero is never confused with "not supported".
nlohmann::json GpusToJson(const HostView& view);

// A Slurm job as the documents show it: id, user, account, partition, ...
nlohmann::json SlurmJobJson(const slurm::SlurmJob& job);
// A Slurm job on this host with each of its GPUs' verdicts at `now`.
nlohmann::json JobOnHostJson(const slurm::JobOnHost& job, core::TimePoint now);

}  // namespace gleaner::cli
