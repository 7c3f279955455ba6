#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/account.h"
#include "core/result.h"
#include "core/units.h"

namespace gleaner::agent {

// What a program printed and how it ended.
struct ProgramOutput {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

struct ProgramOptions {
  core::Duration timeout = core::Seconds(10);
  // "NAME=value": added to our own environment, or replacing a variable of
  // it; with `clean_env`, the whole environment.
  std::vector<std::string> env;
  bool clean_env = false;
  // Run as this user (its groups, from the directory "/"): needs root.
  std::optional<Account> as;
  size_t max_output = size_t{256} << 20;
};

// Runs `argv` (argv[0] searched on PATH) with no standard input and no
// descriptor of ours but its output pipes, and collects what it prints.
// kUnavailable when it cannot be started, runs past the timeout (then it is
// killed) or prints more than `max_output` bytes (kPermissionDenied when
// `as` needs root); a non-zero exit is not an error here: the caller reads
// `exit_code` and `err`.
core::Result<ProgramOutput> RunProgram(const std::vector<std::string>& argv,
                                       const ProgramOptions& options = {});

// What a program printed, short enough for an error: at most `at_most`
// bytes, without trailing white space.
std::string Excerpt(std::string text, size_t at_most = 300);

}  // namespace gleaner::agent
