#pragma once

#include <nlohmann/json.hpp>

#include "cli/host_view.h"

namespace gleaner::cli {

// The `gleaner gpus --json` document, schema "gleaner.gpus/v1" (docs/gpus-json.md).
// A reading that has no value is null, and its reason is listed under the
// GPU's "unavailable" object, so zero is never confused with "not supported".
nlohmann::json GpusToJson(const HostView& view);

}  // namespace gleaner::cli
