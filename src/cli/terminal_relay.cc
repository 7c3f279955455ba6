#include "cli/terminal_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <string>

namespace gleaner::cli {
namespace {

// The write end of a pipe the relay's signals wake it through: 'w' for
// SIGWINCH (the window changed), 'q' for the end of this client (SIGTERM,
// SIGHUP, SIGQUIT): the relay then returns, so the user's terminal leaves
// raw mode.
int g_wake = -1;

void OnSignal(int sig) {
  const int saved = errno;
  const char byte = sig == SIGWINCH ? 'w' : 'q';
  [[maybe_unused]] const ssize_t n = write(g_wake, &byte, 1);
  errno = saved;
}

constexpr int kWakeSignals[] = {SIGWINCH, SIGTERM, SIGHUP, SIGQUIT};

void CopyWindowSize(int from, int to) {
  winsize size{};
  if (ioctl(from, TIOCGWINSZ, &size) == 0) ioctl(to, TIOCSWINSZ, &size);
}

core::Status WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return core::Unavailable(std::string("writing output: ") + std::strerror(errno));
    data += n;
    size -= static_cast<size_t>(n);
  }
  return core::Status::Ok();
}

// Puts the user's terminal in raw mode for its lifetime; nothing where
// `in` is no terminal.
class RawMode {
 public:
  explicit RawMode(int in) : in_(in) {
    if (!isatty(in) || tcgetattr(in, &saved_) != 0) return;
    termios raw = saved_;
    cfmakeraw(&raw);
    active_ = tcsetattr(in, TCSADRAIN, &raw) == 0;
  }
  ~RawMode() {
    if (active_) tcsetattr(in_, TCSADRAIN, &saved_);
  }
  RawMode(const RawMode&) = delete;
  RawMode& operator=(const RawMode&) = delete;

 private:
  int in_;
  termios saved_{};
  bool active_ = false;
};

}  // namespace

core::Status RelayTerminal(int master, int in, int out) {
  int resized[2];
  if (pipe2(resized, O_CLOEXEC | O_NONBLOCK) != 0) {
    return core::Unavailable(std::string("pipe: ") + std::strerror(errno));
  }
  g_wake = resized[1];
  struct sigaction on_signal {};
  on_signal.sa_handler = OnSignal;
  sigemptyset(&on_signal.sa_mask);
  on_signal.sa_flags = SA_RESTART;
  struct sigaction before[std::size(kWakeSignals)] = {};
  for (size_t i = 0; i < std::size(kWakeSignals); ++i) {
    sigaction(kWakeSignals[i], &on_signal, &before[i]);
  }
  // A reader of our output that went away is an error to return, not a
  // death that would leave the terminal raw.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction pipe_before {};
  sigaction(SIGPIPE, &ignore, &pipe_before);
  const bool terminal_in = isatty(in) != 0;
  if (terminal_in) CopyWindowSize(in, master);
  // The session's input waits here while the session reads slower than we
  // type (or paste): a blocking write could stall its output behind it.
  const int master_flags = fcntl(master, F_GETFL);
  fcntl(master, F_SETFL, master_flags | O_NONBLOCK);
  core::Status status = core::Status::Ok();
  {
    const RawMode raw(in);
    std::string to_session;
    bool in_open = true;
    char buf[65536];
    for (;;) {
      constexpr size_t kMaxPending = 1 << 20;
      pollfd fds[3] = {
          {master, static_cast<short>(POLLIN | (to_session.empty() ? 0 : POLLOUT)), 0},
          {in_open && to_session.size() < kMaxPending ? in : -1, POLLIN, 0},
          {resized[0], POLLIN, 0},
      };
      if (poll(fds, 3, -1) < 0) {
        if (errno == EINTR) continue;
        status = core::Unavailable(std::string("poll: ") + std::strerror(errno));
        break;
      }
      if (fds[2].revents != 0) {
        bool quit = false;
        for (ssize_t n; (n = read(resized[0], buf, sizeof buf)) > 0;) {
          quit = quit || std::memchr(buf, 'q', static_cast<size_t>(n)) != nullptr;
        }
        if (quit) {
          status = core::Unavailable("interrupted: the session is left, and hung up");
          break;
        }
        if (terminal_in) CopyWindowSize(in, master);
      }
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        const ssize_t n = read(master, buf, sizeof buf);
        if (n > 0) {
          status = WriteAll(out, buf, static_cast<size_t>(n));
          if (!status.ok()) break;
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          break;  // EIO: nothing holds the session's side any more
        }
      }
      if ((fds[0].revents & POLLOUT) && !to_session.empty()) {
        const ssize_t n = write(master, to_session.data(), to_session.size());
        if (n > 0) to_session.erase(0, static_cast<size_t>(n));
      }
      if (fds[1].revents & POLLNVAL) in_open = false;  // no stdin at all: nothing to send
      if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
        const ssize_t n = read(in, buf, sizeof buf);
        if (n > 0) {
          to_session.append(buf, static_cast<size_t>(n));
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          in_open = false;
          // As ^D typed at the start of a line: the session reads the end.
          termios t{};
          to_session += tcgetattr(master, &t) == 0 ? static_cast<char>(t.c_cc[VEOF]) : '\x04';
        }
      }
    }
  }
  fcntl(master, F_SETFL, master_flags);
  for (size_t i = 0; i < std::size(kWakeSignals); ++i) {
    sigaction(kWakeSignals[i], &before[i], nullptr);
  }
  sigaction(SIGPIPE, &pipe_before, nullptr);
  g_wake = -1;
  close(resized[0]);
  close(resized[1]);
  return status;
}

}  // namespace gleaner::cli
