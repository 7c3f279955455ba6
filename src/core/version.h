#pragma once

#include <string>
#include <string_view>

namespace gleaner::core {

// The release this binary is (the project's version in CMakeLists.txt):
// gleaner --version, gleaner_build_info, protocol errors.
std::string_view Version();
// The commit it was built from: 12 hex digits, "-dirty" when tracked files
// had changed, "unknown" outside a git checkout. Written at build time
// (cmake/BuildInfo.cmake).
std::string_view BuildCommit();

// "0.1.0 (commit 0123456789ab)": what --version prints after the name.
inline std::string VersionLine() {
  return std::string(Version()) + " (commit " + std::string(BuildCommit()) + ")";
}

}  // namespace gleaner::core
