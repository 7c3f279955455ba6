#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sim/utilization_trace.h"

namespace gleaner::sim {

// Pieces shared by the readers of CSV traces (Helios, Philly, OpenB, ITP)
// over core::CsvReader: fields checked against what was expected, and the
// skip-or-stop rule for dirty rows. Every "problem" string below says what
// was expected and what was found; the caller puts FILE:LINE in front.

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
