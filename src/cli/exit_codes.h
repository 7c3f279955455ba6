#pragma once

namespace gleaner::cli {

// Exit codes of every gleaner command; documented in docs/cli.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the command ran and failed
inline constexpr int kExitUsage = 2;     // bad flags or arguments
inline constexpr int kExitNoDriver = 3;  // no usable NVIDIA driver (and no --fake)
inline constexpr int kExitBadInput = 4;  // a file the user gave is malformed

}  // namespace gleaner::cli
