#include "config/toml_ascii.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>

namespace gleaner::config {
namespace {

// The code point of the UTF-8 sequence at text[at] and its length, or
// nothing when it is not valid UTF-8 (overlong, surrogate, past U+10FFFF).
std::optional<std::pair<char32_t, size_t>> DecodeUtf8(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned lead = byte(at);
  const size_t n = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
  if (n == 0 || at + n > text.size()) return std::nullopt;
  char32_t c = lead & (0x7Fu >> n);
  for (size_t i = at + 1; i < at + n; ++i) {
    if ((byte(i) & 0xC0u) != 0x80u) return std::nullopt;
    c = (c << 6) | (byte(i) & 0x3Fu);
  }
  constexpr char32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kLeast[n] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return std::nullopt;
  return std::pair{c, n};
}

}  // namespace

// toml++ 3.3.0, Debian 12's, reaches __builtin_unreachable (undefined
// behaviour; a failed assertion in a debug build) when it asks whether
// some non-ASCII characters (U+00A1-U+0499, among others) are whitespace:
// marzer/tomlplusplus#295. It asks wherever it reads code rather than a
// string or a comment, and how far a token goes depends on how toml++
// reads a broken line, so the text it sees holds no non-ASCII character at
// all: one in code is an error here (TOML allows none there), one in a
// string becomes its \U escape (a literal string is written as the basic
// string that means the same), one in a comment becomes '?'. A valid
// document means what it meant, and lines stay where they were, so
// toml++'s errors name the right one.
core::Result<std::string> WithoutNonAscii(std::string_view text, const std::string& path) {
  enum class In { kCode, kComment, kBasic, kLiteral, kMultiBasic, kMultiLiteral };
  In in = In::kCode;
  int line = 1;
  const auto error = [&](const std::string& what) {
    return core::InvalidArgument(path + ":" + std::to_string(line) + ": " + what);
  };
  const auto non_ascii = [&](size_t at) { return static_cast<unsigned char>(text[at]) >= 0x80; };
  std::string out;
  out.reserve(text.size());
  // A byte order mark, which toml++ skips.
  size_t i = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  out.append(text.substr(0, i));
  while (i < text.size()) {
    const char c = text[i];
    const std::string_view rest = text.substr(i);
    if (non_ascii(i)) {
      const auto code_point = DecodeUtf8(text, i);
      if (!code_point) return error("the text is not valid UTF-8");
      if (in == In::kCode) {
        return error(
            "a non-ASCII character outside a quoted string or a comment; TOML allows them only "
            "there (quote the key or the value)");
      }
      if (in == In::kComment) {
        out += '?';
      } else {
        char escape[16];
        std::snprintf(escape, sizeof escape, "\\U%08X", static_cast<unsigned>(code_point->first));
        out += escape;
      }
      i += code_point->second;
      continue;
    }
    size_t used = 1;  // bytes of `text` this step reads
    if (c == '\n') {
      ++line;
      if (in == In::kComment || in == In::kBasic || in == In::kLiteral) in = In::kCode;
      out += c;
    } else if (in == In::kCode) {
      const bool multi = (c == '"' || c == '\'') && rest.starts_with(std::string(3, c));
      if (c == '#') in = In::kComment;
      if (c == '"') in = multi ? In::kMultiBasic : In::kBasic;
      if (c == '\'') in = multi ? In::kMultiLiteral : In::kLiteral;
      used = multi ? 3 : 1;
      // A literal string opens as a basic one.
      out.append(multi ? R"(""")" : c == '\'' ? "\"" : std::string_view(&c, 1));
    } else if ((in == In::kBasic || in == In::kMultiBasic) && c == '\\') {
      // An escape: the backslash and the character after it, unless that
      // ends the line (the loop counts lines). An escape of a non-ASCII
      // character would become one of a backslash.
      if (i + 1 < text.size() && non_ascii(i + 1)) {
        return error("a backslash before a non-ASCII character; escape it as \\uXXXX instead");
      }
      used = i + 1 < text.size() && text[i + 1] != '\n' ? 2 : 1;
      out.append(rest.substr(0, used));
    } else if ((in == In::kBasic && c == '"') || (in == In::kLiteral && c == '\'')) {
      in = In::kCode;
      out += '"';
    } else if ((in == In::kMultiBasic && rest.starts_with(R"(""")")) ||
               (in == In::kMultiLiteral && rest.starts_with("'''"))) {
      // Up to two more quotes belong to the string: the run ends it.
      used = std::min(rest.find_first_not_of(c), rest.size());
      out.append(used - 3, c).append(R"(""")");
      in = In::kCode;
    } else if ((in == In::kLiteral || in == In::kMultiLiteral) && (c == '\\' || c == '"')) {
      // What a literal string holds as it is, a basic one escapes.
      out.append(1, '\\').append(1, c);
    } else {
      out += c;
    }
    i += used;
  }
  return out;
}

}  // namespace gleaner::config
