#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "core/units.h"

namespace gleaner::core {

// "45s", "2m10s", "1h05m", "3d04h": short, for people.
std::string FormatDuration(Duration d);

// Bytes as lowercase hex digits, two a byte, appended to `out` (a digest,
// a random secret, an escaped control character).
void AppendHex(std::string& out, std::string_view bytes);
std::string Hex(std::string_view bytes);

// `v` with `digits` decimals, as printf's "%.*f" writes it ("3.14").
std::string FormatFixed(double v, int digits = 1);

// A percentage with `digits` decimals and a "%" ("37%", "12.5%").
std::string FormatPercent(double percent, int digits = 0);

// "37.5 GiB", "512 MiB".
std::string FormatBytes(Bytes b);

// "20GiB", "20G", "512 MiB", "1.5TiB" or a plain number of bytes; units
// are binary (G = GiB, as nvidia-smi and Slurm's --mem mean them). The
// error says what is accepted.
Result<Bytes> ParseBytes(std::string_view text);

// `text` as one printable line: control characters (newline, carriage
// return, escape, DEL, and the C1 controls U+0080..U+009F in UTF-8)
// written as \xNN and a backslash as \\, so that
// words a user gave (a reason, a token's name) cannot forge a log line or
// drive the terminal reading it. Other bytes, UTF-8 included, are kept.
std::string OneLine(std::string_view text);

// A table or a report as it may reach a terminal: the control characters
// OneLine escapes, but for line breaks, as \xNN; the rest as it is. For
// text that holds what others wrote (commands, names, reasons), whatever
// cell of it OneLine did not already escape.
std::string TerminalText(std::string_view text);

}  // namespace gleaner::core
