#include "agent/run_program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>
#include <thread>

#include "agent/child_process.h"
#include "core/format.h"

extern char** environ;

namespace gleaner::agent {
namespace {

// Closes both ends of a pipe on scope exit, whichever are still open.
struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) close(f);
    }
  }
};

// A message from the child between fork and exec, where only write(2) is safe.
void ChildSays(const char* message) {
  const ssize_t ignored = write(2, message, std::strlen(message));
  (void)ignored;
}

}  // namespace

core::Result<ProgramOutput> RunProgram(const std::vector<std::string>& argv,
                                       const ProgramOptions& options) {
  if (argv.empty() || argv[0].empty()) return core::InvalidArgument("no program to run");
  // Everything the child needs is built before the fork: between fork and
  // exec a threaded daemon's child may only make system calls.
  std::vector<std::string> env_text = options.env;
  if (!options.clean_env) {
    for (char** e = environ; *e; ++e) {
      const std::string_view entry(*e);
      const std::string prefix(entry.substr(0, entry.find('=') + 1));
      if (std::none_of(options.env.begin(), options.env.end(),
                       [&](const std::string& o) { return o.rfind(prefix, 0) == 0; })) {
        env_text.emplace_back(entry);
      }
    }
  }
  std::string path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  for (const std::string& e : env_text) {
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  }
  // Found by the child, as the user it runs as; here only whether it is
  // there at all, for a clear error.
  const std::vector<std::string> candidates = ExecCandidates(argv[0], path);
  std::vector<const char*> programs;
  for (const std::string& c : candidates) programs.push_back(c.c_str());
  if (int error = ENOENT; !AnyRunnable(programs, &error) && error == ENOENT) {
    return core::Unavailable("cannot run " + argv[0] + ": not found on " + path);
  }
  std::vector<char*> env;
  for (std::string& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  std::vector<std::string> arg_text = argv;
  std::vector<char*> args;
  for (std::string& a : arg_text) args.push_back(a.data());
  args.push_back(nullptr);
  if (options.as && geteuid() != 0 && options.as->uid != geteuid()) {
    return core::PermissionDenied("cannot run " + argv[0] + " as " + options.as->name +
                                  ": gleaner is not root");
  }

  Pipe out;
  Pipe err;
  if (pipe2(out.fd, O_CLOEXEC) != 0 || pipe2(err.fd, O_CLOEXEC) != 0) {
    return core::Unavailable(std::string("cannot make a pipe: ") + std::strerror(errno));
  }
  // Already the user (root running a program as root, or a test as itself):
  // nothing to switch.
  const bool switch_user = options.as && options.as->uid != geteuid();
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) return core::Unavailable(std::string("/dev/null: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid == 0) {
    if (dup2(null_fd, 0) < 0 || dup2(out.fd[1], 1) < 0 || dup2(err.fd[1], 2) < 0) _exit(126);
    CloseDescriptorsBut(-1);
    if (switch_user && (!BecomeUser(*options.as) || chdir("/") != 0)) {
      ChildSays("cannot switch to the user\n");
      _exit(126);
    }
    ExecFirst(programs, args.data(), env.data());
    ChildSays("cannot execute the program\n");
    _exit(127);
  }
  const int fork_errno = errno;
  close(null_fd);
  if (pid < 0) {
    return core::Unavailable("cannot run " + argv[0] + ": " + std::strerror(fork_errno));
  }
  close(out.fd[1]);
  out.fd[1] = -1;
  close(err.fd[1]);
  err.fd[1] = -1;

  ProgramOutput result;
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  std::string failure;
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0 && failure.empty()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      failure = argv[0] + " did not finish within " + core::FormatDuration(options.timeout);
      break;
    }
    const int ready = poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) {
      failure = std::string("poll: ") + std::strerror(errno);
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
        if (result.out.size() + result.err.size() > options.max_output) {
          failure =
              argv[0] + " printed more than " + std::to_string(options.max_output >> 20) + " MiB";
        }
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  // A program may close its output and run on: it too has the deadline.
  int status = 0;
  while (failure.empty()) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      failure = argv[0] + " did not finish within " + core::FormatDuration(options.timeout);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (!failure.empty()) {
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (!failure.empty()) return core::Unavailable(failure);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string Excerpt(std::string text, size_t at_most) {
  if (text.size() > at_most) text.resize(at_most);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

}  // namespace gleaner::agent
