#pragma once

#include <iosfwd>

#include "cli/job_commands.h"

namespace gleaner::cli {

// `gleaner run [--pty] -- CMD`: submits CMD as an interactive session to
// the local `gleaner up`, says why it waits while it waits (^C cancels it),
// attaches this terminal once it runs (stdin and stdout: the session's
// terminal) and returns its exit code. `err` hears gleaner's own words.
int RunSession(const JobOptions& options, std::ostream& err);

}  // namespace gleaner::cli
