#include "gpu/json_lines.h"

namespace gleaner::gpu {

JsonLineIndex::JsonLineIndex(std::string_view text) : text_(text) {
  SkipSpace();
  Value("", 0);
}

int JsonLineIndex::LineOf(std::string pointer) const {
  for (;;) {
    if (auto it = lines_.find(pointer); it != lines_.end()) return it->second;
    if (pointer.empty()) return 1;
    pointer.erase(pointer.rfind('/'));
  }
}

void JsonLineIndex::SkipSpace() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '\n') {
      ++line_;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      return;
    }
    ++pos_;
  }
}

std::string JsonLineIndex::String() {
  std::string out;
  ++pos_;  // opening quote
  while (pos_ < text_.size() && text_[pos_] != '"') {
    if (text_[pos_] == '\\') ++pos_;  // keep the escaped char; keys here are plain ASCII
    if (pos_ < text_.size()) out += text_[pos_++];
  }
  ++pos_;  // closing quote
  return out;
}

void JsonLineIndex::SkipValue() {
  int open = 0;
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == '"') {
      String();
      continue;
    }
    if (open == 0 && (c == ',' || c == '}' || c == ']')) return;
    if (c == '\n') ++line_;
    if (c == '{' || c == '[') ++open;
    if (c == '}' || c == ']') --open;
    ++pos_;
  }
}

void JsonLineIndex::Value(const std::string& pointer, int depth) {
  if (pos_ >= text_.size()) return;
  if (depth >= kMaxDepth) {
    SkipValue();
    return;
  }
  lines_.emplace(pointer, line_);
  char c = text_[pos_];
  if (c == '{' || c == '[') {
    const bool object = c == '{';
    const char close = object ? '}' : ']';
    ++pos_;
    SkipSpace();
    for (size_t i = 0; pos_ < text_.size() && text_[pos_] != close; ++i) {
      std::string child = pointer + "/";
      if (object) {
        child += String();
        SkipSpace();
        ++pos_;  // ':'
        SkipSpace();
      } else {
        child += std::to_string(i);
      }
      Value(child, depth + 1);
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') ++pos_;
      SkipSpace();
    }
    ++pos_;
  } else if (c == '"') {
    String();
  } else {
    while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '}' && text_[pos_] != ']' &&
           text_[pos_] != '\n' && text_[pos_] != ' ') {
      ++pos_;
    }
  }
}

}  // namespace gleaner::gpu
