#pragma once

#include "core/result.h"

namespace gleaner::cli {

// Joins the user's terminal (`in`, `out`) to a session's pseudo-terminal
// `master` until the session's side is gone (every process holding it
// ended, or gleaner hung it up). With `in` a terminal, it is in raw mode
// meanwhile (keys such as ^C go to the session) and restored on return,
// and the session's window follows its size (SIGWINCH). When `in` ends
// (piped input), the session reads end-of-file, as if ^D were typed.
core::Status RelayTerminal(int master, int in, int out);

}  // namespace gleaner::cli
