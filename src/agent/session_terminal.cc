#include "agent/session_terminal.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace gleaner::agent {

TerminalSize SizeFromEnvironment(const std::map<std::string, std::string>& env) {
  TerminalSize size;
  const auto read = [&env](const char* name, unsigned short* into) {
    const auto it = env.find(name);
    if (it == env.end() || it->second.empty() || it->second.size() > 5) return;
    char* end = nullptr;
    const unsigned long n = std::strtoul(it->second.c_str(), &end, 10);
    if (*end == '\0' && n >= 1 && n <= 65535) *into = static_cast<unsigned short>(n);
  };
  read("GLEANER_PTY_ROWS", &size.rows);
  read("GLEANER_PTY_COLS", &size.cols);
  return size;
}

core::Result<SessionTerminal> OpenSessionTerminal(uid_t owner, TerminalSize size) {
  SessionTerminal t;
  const auto fail = [&t](const std::string& what) {
    const std::string why = std::strerror(errno);
    CloseSessionTerminal(t);
    return core::Unavailable("cannot open a terminal for the session: " + what + ": " + why);
  };
  t.master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (t.master < 0) return fail("posix_openpt");
  if (unlockpt(t.master) != 0) return fail("unlockpt");
  char name[128];
  if (ptsname_r(t.master, name, sizeof name) != 0) return fail("ptsname");
  // Opened without becoming gleaner's controlling terminal; the job's first
  // process takes it as its own.
  t.slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (t.slave < 0) return fail(name);
  t.notices = open(name, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (t.notices < 0) return fail(name);
  // The user's, as a login terminal is: `tty`, `mesg` and `write` work.
  if (fchown(t.slave, owner, static_cast<gid_t>(-1)) != 0 || fchmod(t.slave, 0620) != 0) {
    return fail("giving it to the user");
  }
  const winsize window{size.rows, size.cols, 0, 0};
  ioctl(t.master, TIOCSWINSZ, &window);
  return t;
}

void CloseSessionTerminal(SessionTerminal& t) {
  for (int* fd : {&t.master, &t.slave, &t.notices}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

void NoticeOnTerminal(int notices, std::string_view line) {
  if (notices < 0) return;
  // Raw mode or not, "\r\n" starts a line of its own.
  const std::string text = "\r\n[gleaner] " + std::string(line) + "\r\n";
  [[maybe_unused]] const ssize_t n = write(notices, text.data(), text.size());
}

}  // namespace gleaner::agent
