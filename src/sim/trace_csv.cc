#include "sim/trace_csv.h"

#include <charconv>

#include "core/civil_time.h"

namespace gleaner::sim {

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

core::Status DirtyRows::Add(const std::string& path, int64_t line, const std::string& problem) {
  const std::string message = path + ":" + std::to_string(line) + ": " + problem;
  if (!skip_) return core::InvalidArgument(message + " (--skip-bad-rows skips such rows)");
  ++cleaning_->bad_rows_skipped;
  if (static_cast<int>(messages_->size()) < kKeptMessages) messages_->push_back(message);
  return core::Status::Ok();
}

}  // namespace gleaner::sim
