#include "server/process_privacy.h"

namespace gleaner::server {
namespace {

// "/opt/conda/bin/python -m x" -> "python".
std::string ProgramName(const std::string& command) {
  const std::string first = command.substr(0, command.find(' '));
  return first.substr(first.rfind('/') == std::string::npos ? 0 : first.rfind('/') + 1);
}

void Hide(nlohmann::json& node, const std::string& viewer) {
  if (node.is_array()) {
    for (nlohmann::json& item : node) Hide(item, viewer);
    return;
  }
  if (!node.is_object()) return;
  for (auto& [key, value] : node.items()) {
    if (key != "processes" || !value.is_array()) {
      Hide(value, viewer);
      continue;
    }
    for (nlohmann::json& p : value) {
      if (!p.is_object() || !p.contains("command") || !p["command"].is_string()) continue;
      const bool own = !viewer.empty() && p.value("user", nlohmann::json()).is_string() &&
                       p["user"].get<std::string>() == viewer;
      if (!own) p["command"] = ProgramName(p["command"].get<std::string>());
    }
  }
}

}  // namespace

void HideOthersCommands(nlohmann::json& doc, const std::string& viewer) {
  Hide(doc, viewer);
  if (doc.is_object()) doc["commands_hidden"] = true;
}

}  // namespace gleaner::server
