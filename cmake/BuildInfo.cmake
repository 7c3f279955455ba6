# Writes the C++ source that tells which release and commit a binary is
# (gleaner --version, gleaner_build_info). Run at every build:
#   cmake -DSOURCE_DIR=... -DVERSION=0.1.0 -DOUTPUT=build_info.cc -P BuildInfo.cmake
# The file is rewritten only when its text changes, so an unchanged commit
# rebuilds nothing. Outside a git checkout (a release tarball) the commit
# is "unknown"; GLEANER_COMMIT in the environment wins (package builds).
set(commit "$ENV{GLEANER_COMMIT}")
if(commit STREQUAL "")
  execute_process(
    COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
    OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR commit STREQUAL "")
    set(commit "unknown")
  else()
    # Tracked files changed since the commit: say so, as git describe does.
    execute_process(
      COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
      OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT changes STREQUAL "")
      string(APPEND commit "-dirty")
    endif()
  endif()
endif()
if(NOT commit MATCHES "^[A-Za-z0-9._-]+$")
  message(FATAL_ERROR "GLEANER_COMMIT='${commit}': only letters, digits, '.', '_' and '-'")
endif()
set(text "// Generated at build time by cmake/BuildInfo.cmake.
#include \"core/version.h\"

namespace gleaner::core {

std::string_view Version() { return \"${VERSION}\"; }
std::string_view BuildCommit() { return \"${commit}\"; }

}  // namespace gleaner::core
")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
