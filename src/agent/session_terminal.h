#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <string_view>

#include "core/result.h"

namespace gleaner::agent {

// The pseudo-terminal of an interactive session. The job's stdin, stdout
// and stderr are `slave` (its controlling terminal); the client that
// attaches gets `master`; `notices` is a second, non-blocking opening of
// the slave through which gleaner tells the user what is coming (a vacate),
// never stalling on a terminal nobody reads. All close on exec.
struct SessionTerminal {
  int master = -1;
  int slave = -1;
  int notices = -1;
};

// The size a session's terminal starts at: the client's, which it sends
// with the job as GLEANER_PTY_ROWS and GLEANER_PTY_COLS (as srun sends
// SLURM_PTY_WIN_ROW and _COL), since the session may start before the
// client attaches; 24x80 where they are absent or not sizes.
struct TerminalSize {
  unsigned short rows = 24;
  unsigned short cols = 80;
};
TerminalSize SizeFromEnvironment(const std::map<std::string, std::string>& env);

// Opens one, its slave given to `owner` (mode 0620, as a login's).
core::Result<SessionTerminal> OpenSessionTerminal(uid_t owner, TerminalSize size);

// Closes what is still open of `t` (-1: already given away).
void CloseSessionTerminal(SessionTerminal& t);

// Writes `line` (without its line end) to the terminal on a line of its
// own, if there is room: a notice never blocks gleaner.
void NoticeOnTerminal(int notices, std::string_view line);

}  // namespace gleaner::agent
