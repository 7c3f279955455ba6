#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gleaner::gpu {

// Scenarios compiled into the binary from scenarios/*.json, so `--fake demo`
// works wherever gleaner is copied.
std::optional<std::string_view> BuiltinScenarioText(std::string_view name);
std::vector<std::string> BuiltinScenarioNames();

}  // namespace gleaner::gpu
