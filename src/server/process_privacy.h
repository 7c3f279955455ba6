#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gleaner::server {

// Like the kernel's hidepid for the GPUs' processes: in a gleaner.gpus/v1
// document (one host's, or a cluster's), every process whose user is not
// `viewer` keeps its user, pid and memory, and its command shrinks to its
// program's name ("/opt/conda/bin/python -m ipykernel -f k.json" shows as
// "python"): a command line may hold a path, a token or a password. An
// empty `viewer` (an anonymous reader) sees every command so. The document
// says so in "commands_hidden": true.
void HideOthersCommands(nlohmann::json& doc, const std::string& viewer);

}  // namespace gleaner::server
