#include "sim/trace_csv.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "core/civil_time.h"

namespace gleaner::sim {
namespace {

std::string_view TrimBlanks(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  const size_t end = s.find_last_not_of(" \t");
  return s.substr(begin, end - begin + 1);
}

std::string_view DropCr(std::string_view s) {
  return !s.empty() && s.back() == '\r' ? s.substr(0, s.size() - 1) : s;
}

}  // namespace

std::vector<std::string_view> SplitCsvFields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    std::string_view f =
        TrimBlanks(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
    out.push_back(f);
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

std::string ParseIntField(std::string_view column, std::string_view text, int64_t lo, int64_t hi,
                          int64_t* v) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *v);
  if (!text.empty() && ec == std::errc() && end == text.data() + text.size() && *v >= lo &&
      *v <= hi) {
    return "";
  }
  return "column " + std::string(column) + ": expected an integer from " + std::to_string(lo) +
         " to " + std::to_string(hi) + ", got \"" + std::string(text) + "\"";
}

std::string ParseDateTimeField(std::string_view column, std::string_view text, int64_t* t_s) {
  const std::string problem = "column " + std::string(column) +
                              ": expected a time YYYY-MM-DD HH:MM:SS, got \"" + std::string(text) +
                              "\"";
  if (text.size() != 19 || text[4] != '-' || text[7] != '-' || text[10] != ' ' || text[13] != ':' ||
      text[16] != ':') {
    return problem;
  }
  const std::optional<core::TimePoint> t = core::ParseUtcSeconds(text);
  if (!t || *t < core::FromUnixMicros(0)) return problem + " (not a valid date and time)";
  *t_s = core::ToUnixMicros(*t) / 1'000'000;
  return "";
}

std::string FormatDateTime(int64_t t_s) {
  return core::FormatUtcSeconds(core::FromUnixMicros(t_s * 1'000'000));
}

core::Result<CsvLineReader> CsvLineReader::Open(const std::string& path) {
  CsvLineReader reader;
  reader.path_ = path;
  reader.in_.open(path);
  if (!reader.in_) return core::NotFound("cannot open " + path + "; check the path");
  if (!std::getline(reader.in_, reader.header_)) {
    return core::InvalidArgument(path + ":1: the file is empty; expected a header line");
  }
  reader.header_ = std::string(DropCr(reader.header_));
  reader.header_width_ = SplitCsvFields(reader.header_).size();
  return core::Result<CsvLineReader>(std::move(reader));
}

core::Result<std::vector<size_t>> CsvLineReader::FindColumns(
    std::initializer_list<std::string_view> names, const std::string& expected) const {
  const std::vector<std::string_view> fields = SplitCsvFields(header_);
  std::vector<size_t> at;
  for (std::string_view name : names) {
    const auto it = std::find(fields.begin(), fields.end(), name);
    if (it == fields.end()) {
      return core::InvalidArgument(path_ + ":1: the header has no column \"" + std::string(name) +
                                   "\"; expected " + expected + ", got \"" + header_ + "\"");
    }
    at.push_back(static_cast<size_t>(it - fields.begin()));
  }
  return at;
}

bool CsvLineReader::Next(std::string* row) {
  while (std::getline(in_, *row)) {
    ++line_;
    if (!TrimBlanks(DropCr(*row)).empty()) {
      *row = std::string(DropCr(*row));
      return true;
    }
  }
  return false;
}

core::Status DirtyRows::Add(const std::string& path, int64_t line, const std::string& problem) {
  const std::string message = path + ":" + std::to_string(line) + ": " + problem;
  if (!skip_) return core::InvalidArgument(message + " (--skip-bad-rows skips such rows)");
  ++cleaning_->bad_rows_skipped;
  if (static_cast<int>(messages_->size()) < kKeptMessages) messages_->push_back(message);
  return core::Status::Ok();
}

}  // namespace gleaner::sim
