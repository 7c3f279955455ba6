#pragma once

#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sim/utilization_trace.h"

namespace gleaner::sim {

// Pieces shared by the readers of per-minute CSV traces (Helios, Philly):
// splitting a line, fields checked against what was expected, the header's
// columns found by name, and the skip-or-stop rule for dirty rows. Every
// "problem" string below says what was expected and what was found; the
// caller puts FILE:LINE in front.

// The comma-separated fields of `line`, each with surrounding spaces and
// then one pair of surrounding double quotes removed. No quoted commas: the
// traces read with this have none.
std::vector<std::string_view> SplitCsvFields(std::string_view line);

// "" when `text` is a decimal integer in [lo, hi], with *v set; otherwise
// "column COLUMN: expected an integer from LO to HI, got "TEXT"".
std::string ParseIntField(std::string_view column, std::string_view text, int64_t lo, int64_t hi,
                          int64_t* v);

// "" when `text` is a valid `YYYY-MM-DD HH:MM:SS` (proleptic Gregorian,
// years 1970-9999), with *t_s set to its seconds since 1970-01-01 00:00:00
// as if the time were UTC; otherwise what was expected.
std::string ParseDateTimeField(std::string_view column, std::string_view text, int64_t* t_s);

// The inverse: "YYYY-MM-DD HH:MM:SS" of seconds since 1970 (UTC), t_s >= 0.
std::string FormatDateTime(int64_t t_s);

// Reads a CSV file line by line: the header first, then the data rows,
// numbering lines from 1, dropping a trailing '\r' and skipping lines that
// are empty or all blanks. Not thread-safe; one reader per file.
class CsvLineReader {
 public:
  // NotFound when `path` cannot be opened; InvalidArgument when it is empty.
  static core::Result<CsvLineReader> Open(const std::string& path);

  const std::string& path() const { return path_; }
  const std::string& header() const { return header_; }

  // The index of each name in `names` among the header's fields, in the
  // order of `names`; InvalidArgument "PATH:1: the header has no column
  // "X"; expected EXPECTED, got "HEADER"" when one is missing.
  core::Result<std::vector<size_t>> FindColumns(std::initializer_list<std::string_view> names,
                                                const std::string& expected) const;
  size_t header_width() const { return header_width_; }

  // The next data row (false at the end of the file); line() is its number.
  bool Next(std::string* row);
  int64_t line() const { return line_; }

 private:
  CsvLineReader() = default;

  std::string path_;
  std::ifstream in_;
  std::string header_;
  size_t header_width_ = 0;
  int64_t line_ = 1;
};

// The skip-or-stop rule for dirty rows. Without skipping, the first dirty
// row becomes the reader's error; with it, rows are counted in
// `cleaning->bad_rows_skipped` and the first kKeptMessages messages kept.
class DirtyRows {
 public:
  static constexpr int kKeptMessages = 10;

  DirtyRows(bool skip, TraceCleaning* cleaning, std::vector<std::string>* messages)
      : skip_(skip), cleaning_(cleaning), messages_(messages) {}

  // InvalidArgument "PATH:LINE: PROBLEM (--skip-bad-rows skips such rows)"
  // when not skipping; otherwise counts the row and returns Ok.
  core::Status Add(const std::string& path, int64_t line, const std::string& problem);

 private:
  bool skip_;
  TraceCleaning* cleaning_;
  std::vector<std::string>* messages_;
};

}  // namespace gleaner::sim
