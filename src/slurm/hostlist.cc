#include "slurm/hostlist.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace gleaner::slurm {
namespace {

core::Status Invalid(std::string_view list, const std::string& why) {
  return core::InvalidArgument("Slurm host list \"" + std::string(list.substr(0, 80)) +
                               "\": " + why);
}

// Splits at commas outside brackets.
std::vector<std::string_view> TopLevelParts(std::string_view list) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || (list[i] == ',' && depth == 0)) {
      if (i > start) parts.push_back(list.substr(start, i - start));
      start = i + 1;
    } else if (list[i] == '[') {
      ++depth;
    } else if (list[i] == ']') {
      --depth;
    }
  }
  return parts;
}

std::optional<uint64_t> Number(std::string_view text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// Expands one part ("gpu[01-03]-ib") onto `out`.
core::Status ExpandPart(std::string_view list, std::string_view part, size_t limit,
                        std::vector<std::string>& out) {
  const size_t open = part.find('[');
  if (open == std::string_view::npos) {
    if (part.find(']') != std::string_view::npos) return Invalid(list, "a ']' without its '['");
    if (out.size() >= limit) return Invalid(list, "more than " + std::to_string(limit) + " names");
    out.emplace_back(part);
    return core::Status::Ok();
  }
  const size_t close = part.find(']', open);
  if (close == std::string_view::npos) return Invalid(list, "a '[' without its ']'");
  const std::string_view prefix = part.substr(0, open);
  const std::string_view ranges = part.substr(open + 1, close - open - 1);
  const std::string_view rest = part.substr(close + 1);
  size_t start = 0;
  while (start <= ranges.size()) {
    size_t comma = ranges.find(',', start);
    if (comma == std::string_view::npos) comma = ranges.size();
    const std::string_view range = ranges.substr(start, comma - start);
    const size_t dash = range.find('-');
    const std::string_view lo_text = range.substr(0, dash);
    const std::string_view hi_text =
        dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
    const auto lo = Number(lo_text);
    const auto hi = Number(hi_text);
    if (!lo || !hi || *hi < *lo) {
      return Invalid(list, "\"" + std::string(range) + "\" is not a range of numbers");
    }
    if (*hi - *lo >= limit) return Invalid(list, "more than " + std::to_string(limit) + " names");
    const size_t width = lo_text.size();  // "01-03" keeps its zeros
    for (uint64_t n = *lo; n <= *hi; ++n) {
      std::string digits = std::to_string(n);
      if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
      std::vector<std::string> tails;
      if (auto s = ExpandPart(list, rest, limit, tails); !s.ok()) return s;
      for (std::string& tail : tails) {
        if (out.size() >= limit) {
          return Invalid(list, "more than " + std::to_string(limit) + " names");
        }
        out.push_back(std::string(prefix) + digits + tail);
      }
    }
    start = comma + 1;
  }
  return core::Status::Ok();
}

}  // namespace

core::Result<std::vector<std::string>> ExpandHostlist(std::string_view list, size_t limit) {
  std::vector<std::string> out;
  for (std::string_view part : TopLevelParts(list)) {
    if (auto s = ExpandPart(list, part, limit, out); !s.ok()) return s;
  }
  return out;
}

core::Result<std::vector<uint32_t>> ParseGresIndices(std::string_view detail) {
  std::vector<uint32_t> out;
  size_t pos = 0;
  while (pos < detail.size()) {
    // One entry: up to the ')' closing its "(IDX:...)", or the next comma.
    const size_t paren = detail.find('(', pos);
    const size_t comma = detail.find(',', pos);
    const bool has_list =
        paren != std::string_view::npos && (comma == std::string_view::npos || paren < comma);
    const size_t close = has_list ? detail.find(')', paren) : std::string_view::npos;
    if (has_list && close == std::string_view::npos) {
      return core::InvalidArgument("GRES detail \"" + std::string(detail.substr(0, 80)) +
                                   "\": a '(' without its ')'");
    }
    const size_t end =
        has_list ? close + 1 : (comma == std::string_view::npos ? detail.size() : comma);
    const std::string_view name = detail.substr(pos, (has_list ? paren : end) - pos);
    if (has_list && (name == "gpu" || name.rfind("gpu:", 0) == 0)) {
      std::string_view inside = detail.substr(paren + 1, close - paren - 1);
      if (inside.rfind("IDX:", 0) == 0) {
        inside.remove_prefix(4);
        if (inside != "N/A") {
          auto names = ExpandHostlist("[" + std::string(inside) + "]", 4096);
          if (!names.ok()) {
            return core::InvalidArgument("GRES detail \"" + std::string(detail.substr(0, 80)) +
                                         "\": the index list cannot be read");
          }
          for (const std::string& n : *names) {
            const auto index = Number(n);
            if (!index || *index > 65535) {
              return core::InvalidArgument("GRES detail \"" + std::string(detail.substr(0, 80)) +
                                           "\": " + n + " is not a device index");
            }
            out.push_back(static_cast<uint32_t>(*index));
          }
        }
      }
    }
    pos = end;
    if (pos < detail.size() && detail[pos] == ',') ++pos;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace gleaner::slurm
