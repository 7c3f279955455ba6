#include "core/format.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace gleaner::core {

std::string FormatFixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string FormatPercent(double percent, int digits) {
  // Whole percentages are the common case (every sample's evidence says
  // one): they skip printf, rounding half to even as it does.
  if (digits == 0) {
    const double whole = std::nearbyint(percent);
    if (percent >= 0 && whole < 1e15) return std::to_string(static_cast<int64_t>(whole)) + "%";
  }
  return FormatFixed(percent, digits) + "%";
}

std::string FormatDuration(Duration d) {
  const int64_t s = d.count() / 1'000'000;
  char buf[32];
  if (d.count() < 0) return "-" + FormatDuration(-d);
  if (s == 0 && d.count() > 0) {
    std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(d.count() / 1000));
  } else if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else if (s < 86400) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s % 3600 / 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lldd%02lldh", static_cast<long long>(s / 86400),
                  static_cast<long long>(s % 86400 / 3600));
  }
  return buf;
}

std::string FormatBytes(Bytes b) {
  char buf[32];
  if (b >= Bytes::GiB(1)) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", b.ToGiB());
  } else {
    std::snprintf(buf, sizeof buf, "%.0f MiB", b.ToMiB());
  }
  return buf;
}

Result<Bytes> ParseBytes(std::string_view text) {
  const auto bad = [&] {
    return InvalidArgument("\"" + std::string(text.substr(0, 64)) +
                           "\" is not a size: give a number and a unit, like 20GiB, 512MiB or "
                           "20G");
  };
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == 0 || i > 32) return bad();
  const std::string number(text.substr(0, i));
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(value)) return bad();
  std::string unit;
  for (char c : text.substr(i)) {
    if (c != ' ') unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  double scale = 0;
  if (unit.empty() || unit == "b") {
    scale = 1;
  } else if (unit == "k" || unit == "kib") {
    scale = 0x1p10;
  } else if (unit == "m" || unit == "mib") {
    scale = 0x1p20;
  } else if (unit == "g" || unit == "gib") {
    scale = 0x1p30;
  } else if (unit == "t" || unit == "tib") {
    scale = 0x1p40;
  } else {
    return bad();
  }
  const double bytes = value * scale;
  if (bytes >= 0x1p63) return InvalidArgument("\"" + number + "\" is too large a size");
  return Bytes(static_cast<uint64_t>(bytes));
}

void AppendHex(std::string& out, std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  out.reserve(out.size() + 2 * bytes.size());
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 0xf];
  }
}

std::string Hex(std::string_view bytes) {
  std::string out;
  AppendHex(out, bytes);
  return out;
}

namespace {

// OneLine; TerminalText where `for_terminal`.
std::string Escaped(std::string_view text, bool for_terminal) {
  std::string out;
  out.reserve(text.size());
  const auto escape = [&](unsigned char byte) {
    out += "\\x";
    AppendHex(out, std::string_view(reinterpret_cast<const char*>(&byte), 1));
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const unsigned char next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (byte == '\\' && !for_terminal) {
      out += "\\\\";
    } else if (byte == '\n' && for_terminal) {
      out += '\n';
    } else if (byte < 0x20 || byte == 0x7f) {
      escape(byte);
    } else if (byte == 0xc2 && next >= 0x80 && next <= 0x9f) {
      // U+0080..U+009F, the C1 controls (0x9b opens an escape sequence on
      // some terminals), as UTF-8.
      escape(byte);
      escape(next);
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

std::string OneLine(std::string_view text) { return Escaped(text, false); }

std::string TerminalText(std::string_view text) { return Escaped(text, true); }

}  // namespace gleaner::core
