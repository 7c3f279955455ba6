#pragma once

// Internal to the store backends: sets and lists kept in one text column as
// comma-separated items ("7,42", "alice,bob"). Items never hold a comma:
// they are pids, user names and GPU UUIDs.

#include <sstream>
#include <string>
#include <vector>

namespace gleaner::store {

template <typename Range>
std::string JoinList(const Range& items) {
  std::ostringstream out;
  bool first = true;
  for (const auto& item : items) {
    out << (first ? "" : ",") << item;
    first = false;
  }
  return out.str();
}

inline std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace gleaner::store
