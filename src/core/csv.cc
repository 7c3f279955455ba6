#include "core/csv.h"

#include <algorithm>
#include <fstream>

namespace gleaner::core {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimEnd(std::string_view s) {
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

void DropCr(std::string* line) {
  if (!line->empty() && line->back() == '\r') line->pop_back();
}

}  // namespace

std::string SplitCsvRow(std::string_view line, CsvBlanks blanks, std::vector<std::string>* fields) {
  const bool trim = blanks == CsvBlanks::kTrim;
  size_t count = 0;
  size_t i = 0;
  while (true) {
    if (count == fields->size()) fields->emplace_back();
    std::string& field = (*fields)[count++];
    field.clear();
    if (trim) {
      while (i < line.size() && IsBlank(line[i])) ++i;
    }
    if (i < line.size() && line[i] == '"') {
      bool closed = false;
      for (++i; i < line.size() && !closed;) {
        const size_t quote = line.find('"', i);
        if (quote == std::string_view::npos) break;
        field.append(line.substr(i, quote - i));
        const bool doubled = quote + 1 < line.size() && line[quote + 1] == '"';
        if (doubled) field += '"';
        closed = !doubled;
        i = quote + (doubled ? 2 : 1);
      }
      if (!closed) {
        fields->resize(count);
        return "a quoted field is not closed";
      }
    }
    // An unquoted field, or what follows a closing quote, runs to the comma.
    const size_t comma = line.find(',', i);
    std::string_view rest = line.substr(i, comma == std::string_view::npos ? comma : comma - i);
    field.append(trim ? TrimEnd(rest) : rest);
    if (comma == std::string_view::npos) break;
    i = comma + 1;
  }
  fields->resize(count);
  return "";
}

Result<CsvReader> CsvReader::Open(const std::string& path, CsvBlanks blanks) {
  auto file = std::make_unique<std::ifstream>(path);
  if (!*file) return NotFound("cannot open " + path + "; check the path");
  CsvReader reader;
  reader.owned_ = std::move(file);
  reader.in_ = reader.owned_.get();
  reader.name_ = path;
  reader.blanks_ = blanks;
  GLEANER_RETURN_IF_ERROR(reader.ReadHeader());
  return reader;
}

Result<CsvReader> CsvReader::Over(std::istream& in, const std::string& name, CsvBlanks blanks) {
  CsvReader reader;
  reader.in_ = &in;
  reader.name_ = name;
  reader.blanks_ = blanks;
  GLEANER_RETURN_IF_ERROR(reader.ReadHeader());
  return reader;
}

Status CsvReader::ReadHeader() {
  if (!Next()) return InvalidArgument(name_ + ":1: the file is empty; expected a header line");
  if (!split_problem_.empty()) return InvalidArgument(At("the header: " + split_problem_));
  header_line_ = text_;
  header_.swap(fields_);
  header_at_ = line_;
  return Status::Ok();
}

std::optional<size_t> CsvReader::Find(std::string_view column) const {
  const auto it = std::find(header_.begin(), header_.end(), column);
  if (it == header_.end()) return std::nullopt;
  return static_cast<size_t>(it - header_.begin());
}

Result<std::vector<size_t>> CsvReader::FindColumns(std::initializer_list<std::string_view> names,
                                                   std::string_view expected) const {
  std::vector<size_t> at;
  for (std::string_view name : names) {
    const std::optional<size_t> column = Find(name);
    if (!column) {
      return InvalidArgument(name_ + ":" + std::to_string(header_at_) +
                             ": the header has no column \"" + std::string(name) + "\"; expected " +
                             std::string(expected) + ", got \"" + header_line_ + "\"");
    }
    at.push_back(*column);
  }
  return at;
}

bool CsvReader::Next() {
  while (std::getline(*in_, text_)) {
    ++line_;
    DropCr(&text_);
    if (text_.find_first_not_of(" \t") == std::string::npos) continue;
    split_problem_ = SplitCsvRow(text_, blanks_, &fields_);
    return true;
  }
  return false;
}

std::string CsvReader::RowProblem() const {
  if (!split_problem_.empty()) return split_problem_;
  if (fields_.size() == header_.size()) return "";
  return "expected " + std::to_string(header_.size()) +
         " comma-separated fields as in the header, got " + std::to_string(fields_.size());
}

std::string CsvReader::At(std::string_view what) const {
  return name_ + ":" + std::to_string(line_) + ": " + std::string(what);
}

}  // namespace gleaner::core
