#pragma once

// Sections of gleaner.toml read outside config_file.cc.
#include <string>

#include "config/toml_fields.h"
#include "core/result.h"
#include "cost/cost_settings.h"

namespace gleaner::config {

// [cost] and its [cost.onprem.MODEL] tables (docs/cost.md).
core::Status ReadCost(const std::string& path, const toml::table& t, cost::CostSettings* c);

}  // namespace gleaner::config
