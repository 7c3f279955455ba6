#pragma once

#include <cstdint>
#include <initializer_list>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace gleaner::core {

// The one CSV reader: price catalogs, cluster traces and utilization series
// all come through here, so a quoted comma or a CRLF line ending means the
// same in each, and every error names FILE:LINE.

// Blanks (spaces and tabs) around a field. RFC 4180 keeps them as part of
// the field; traces exported by scripts often pad their columns, and their
// readers trim them.
enum class CsvBlanks { kKeep, kTrim };

// Splits one line (without its line break) into *fields in RFC 4180's
// quoting: a field that starts with a double quote runs to the next lone
// one and may hold commas, and "" inside it stands for one quote. The
// strings already in *fields are reused, so a reading loop does not
// allocate per row. Returns "" or what is wrong with the line ("a quoted
// field is not closed"); *fields then holds what could be read.
std::string SplitCsvRow(std::string_view line, CsvBlanks blanks, std::vector<std::string>* fields);

// Reads a CSV file: the header first, then the data rows, numbering lines
// from 1, dropping a trailing '\r' and passing over lines that are empty or
// all blanks (before the header too). Not thread-safe; one reader per file.
class CsvReader {
 public:
  // NotFound when `path` cannot be opened; InvalidArgument when it is empty
  // or its header cannot be split.
  static Result<CsvReader> Open(const std::string& path, CsvBlanks blanks);
  // The same over a stream the caller keeps open while reading; `name`
  // stands for the file in messages.
  static Result<CsvReader> Over(std::istream& in, const std::string& name, CsvBlanks blanks);

  const std::string& name() const { return name_; }
  const std::string& header_line() const { return header_line_; }
  const std::vector<std::string>& header() const { return header_; }

  // Where `column` stands in the header.
  std::optional<size_t> Find(std::string_view column) const;
  // Where each of `names` stands, in their order; InvalidArgument "NAME:LINE:
  // the header has no column "X"; expected EXPECTED, got "HEADER"" when one
  // is missing.
  Result<std::vector<size_t>> FindColumns(std::initializer_list<std::string_view> names,
                                          std::string_view expected) const;

  // Moves to the next data row; false at the end of the file.
  bool Next();
  // The current row's fields and line number.
  const std::vector<std::string>& fields() const { return fields_; }
  int64_t line() const { return line_; }
  // "" when the row split cleanly into as many fields as the header has;
  // otherwise what is wrong with it.
  std::string RowProblem() const;
  // "NAME:LINE: what" for the current row (the header's line before Next).
  std::string At(std::string_view what) const;

 private:
  CsvReader() = default;
  Status ReadHeader();

  std::unique_ptr<std::istream> owned_;  // set by Open; Over reads the caller's
  std::istream* in_ = nullptr;
  std::string name_;
  CsvBlanks blanks_ = CsvBlanks::kKeep;
  std::string header_line_;
  std::vector<std::string> header_;
  int64_t header_at_ = 1;  // the header's line number
  std::string text_;       // the current line
  std::vector<std::string> fields_;
  std::string split_problem_;
  int64_t line_ = 0;
};

}  // namespace gleaner::core
