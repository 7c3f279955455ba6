#include "agent/cdi_devices.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/json_depth.h"

namespace gleaner::agent {
namespace {

constexpr const char* kGpuKind = "nvidia.com/gpu";
constexpr uintmax_t kMaxSpecBytes = uintmax_t{16} << 20;

std::string Unquote(std::string v) {
  while (!v.empty() && (v.back() == ' ' || v.back() == '\r' || v.back() == '\t')) v.pop_back();
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    v = v.substr(1, v.size() - 2);
  }
  return v;
}

// The value of a "key: value" line (after any "- "), or nothing.
bool ValueOf(const std::string& line, const std::string& key, std::string* value) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos) return false;
  if (line.compare(i, 2, "- ") == 0) i = line.find_first_not_of(" \t", i + 2);
  if (i == std::string::npos || line.compare(i, key.size() + 1, key + ":") != 0) return false;
  const size_t start = line.find_first_not_of(" \t", i + key.size() + 1);
  *value = start == std::string::npos ? "" : Unquote(line.substr(start));
  return true;
}

// A YAML spec, read for what matters here: its top-level kind and its
// devices' names (CDI's schema has no other "name" key).
void ReadYaml(const std::string& text, std::set<std::string>* out) {
  std::istringstream lines(text);
  std::string line;
  std::string kind;
  std::vector<std::string> names;
  while (std::getline(lines, line)) {
    std::string value;
    if (!line.empty() && line[0] != ' ' && ValueOf(line, "kind", &value)) kind = value;
    if (ValueOf(line, "name", &value) && !value.empty()) names.push_back(value);
  }
  if (kind == kGpuKind) out->insert(names.begin(), names.end());
}

void ReadJson(const std::string& text, std::set<std::string>* out) {
  const nlohmann::json spec = core::ParseUntrustedJson<nlohmann::json>(text);
  if (!spec.is_object() || spec.value("kind", "") != kGpuKind) return;
  const auto devices = spec.find("devices");
  if (devices == spec.end() || !devices->is_array()) return;
  for (const nlohmann::json& d : *devices) {
    if (d.is_object() && d.contains("name") && d["name"].is_string()) out->insert(d["name"]);
  }
}

}  // namespace

std::set<std::string> CdiGpuDevices(const std::vector<std::string>& dirs) {
  std::set<std::string> out;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".json" && ext != ".yaml" && ext != ".yml") continue;
      if (!entry.is_regular_file(ec) || entry.file_size(ec) > kMaxSpecBytes) continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      if (ext == ".json") {
        ReadJson(text.str(), &out);
      } else {
        ReadYaml(text.str(), &out);
      }
    }
  }
  return out;
}

}  // namespace gleaner::agent
