#pragma once

#include <iosfwd>

#include "cli/job_commands.h"

namespace gleaner::cli {

// `gleaner run [--pty] -- CMD`: submits CMD as an interactive session to
// the local `gleaner up`, says why it waits while it waits (^C cancels it),
// attaches this terminal once it runs (stdin and stdout: the session's
// terminal) and returns its exit code. `err` hears gleaner's own words.
int RunSession(const JobOptions& options, std::ostream& err);

// `gleaner notebook`: submits a Jupyter server (`jupyter lab`, as the user
// finds it) bound to 127.0.0.1 as a job, waits as `run` does, and prints
// its URL with its token on `out` once Jupyter says it; the server runs on
// as a job, until cancelled or its time limit (8 h unless --max-runtime).
inline constexpr int kNotebookHours = 8;
int RunNotebook(const JobOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gleaner::cli
