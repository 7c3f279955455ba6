#include "cost/gpu_names.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace gleaner::cost {
namespace {

std::vector<std::string> UpperTokens(std::string_view name) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      current += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (!current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

// "80GB" -> 80.
std::optional<int> GigabytesOf(const std::string& token) {
  if (token.size() < 3 || !token.ends_with("GB")) return std::nullopt;
  const std::string digits = token.substr(0, token.size() - 2);
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  return std::atoi(digits.c_str());
}

struct Family {
  const char* name;
  std::vector<int> sizes_gb;  // the sizes the catalog tells apart; empty: none
};

// Longer names first where one is a prefix of another (L40S before L40).
const std::vector<Family>& Families() {
  static const std::vector<Family> families = {
      {"H200", {141}}, {"H100", {80, 94}}, {"A100", {40, 80}}, {"V100", {16, 32}}, {"L40S", {}},
      {"L40", {}},     {"L4", {}},         {"A10G", {}},       {"A10", {}},        {"A30", {}},
      {"A40", {}},     {"T4", {}},         {"P40", {}},        {"P4", {}},
  };
  return families;
}

int NearestSize(const std::vector<int>& sizes, double gb) {
  int best = sizes.front();
  for (int s : sizes) {
    if (std::abs(s - gb) < std::abs(best - gb)) best = s;
  }
  return best;
}

}  // namespace

std::string CatalogModelOfGpuName(std::string_view driver_name,
                                  std::optional<uint64_t> memory_total_bytes) {
  std::vector<std::string> tokens;
  for (std::string& t : UpperTokens(driver_name)) {
    if (t != "NVIDIA" && t != "TESLA" && t != "GEFORCE") tokens.push_back(std::move(t));
  }
  std::optional<int> named_gb;
  bool nvl = false;
  for (const std::string& t : tokens) {
    if (auto gb = GigabytesOf(t)) named_gb = gb;
    nvl = nvl || t == "NVL";
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == "RTX" && i + 1 < tokens.size()) return "RTX" + tokens[i + 1];
    for (const Family& f : Families()) {
      if (tokens[i] != f.name) continue;
      if (f.sizes_gb.empty()) return f.name;
      std::optional<int> gb = named_gb;
      if (!gb && memory_total_bytes) {
        gb = NearestSize(f.sizes_gb, static_cast<double>(*memory_total_bytes) / (1ull << 30));
      }
      std::string model = f.name;
      if (nvl) model += "-NVL";
      if (gb) model += "-" + std::to_string(*gb) + "GB";
      return model;
    }
  }
  std::string rest;
  for (const std::string& t : tokens) rest += (rest.empty() ? "" : "-") + t;
  return rest;
}

}  // namespace gleaner::cost
