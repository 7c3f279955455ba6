#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

namespace gleaner::gpu {

// Maps each value in a valid JSON document to the line it starts on, keyed
// by JSON Pointer ("/gpus/2/timeline/0"). nlohmann::json 3.11 keeps no
// positions, and an error in a scenario file is only useful with its line.
class JsonLineIndex {
 public:
  // `text` must already have parsed as JSON; on anything else the index is
  // partial and lookups fall back to line 1.
  explicit JsonLineIndex(std::string_view text);

  // The line (1-based) of the value at `pointer`; the nearest indexed
  // ancestor's line when the pointer itself is absent (a missing key).
  int LineOf(std::string pointer) const;

 private:
  // Deeper values are skipped, not indexed: errors inside them name the
  // nearest indexed ancestor's line, and hostile nesting cannot exhaust the
  // stack or the memory.
  static constexpr int kMaxDepth = 32;
  void Value(const std::string& pointer, int depth);
  void SkipValue();
  void SkipSpace();
  std::string String();

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  std::unordered_map<std::string, int> lines_;
};

}  // namespace gleaner::gpu
