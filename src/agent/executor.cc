#include "agent/executor.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "agent/account.h"
#include "agent/cdi_devices.h"
#include "agent/child_process.h"
#include "agent/container_command.h"
#include "agent/gang_env.h"
#include "agent/process_info.h"
#include "agent/session_terminal.h"
#include "core/format.h"

namespace gleaner::agent {
namespace {

// A job's oom_score_adj: ended before the host's own processes (0) when
// memory runs out, as a guest should be.
constexpr const char* kJobOomScoreAdj = "500";

// execve's form of `strings`: pointers into them, then a null.
std::vector<char*> NullTerminated(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::string Join(const std::vector<core::GpuUuid>& gpus) {
  std::string out;
  for (const core::GpuUuid& g : gpus) out += (out.empty() ? "" : ",") + g.str();
  return out;
}

// What the child was doing when it failed: the parent words the error.
enum class ChildStage : int { kSetUp, kCredentials, kWorkingDir, kExec };

struct ChildFailure {
  ChildStage stage;
  int error;
};

[[noreturn]] void ChildFail(int pipe_fd, ChildStage stage, int error) {
  // Tell the parent why, then leave without running any atexit handler.
  const ChildFailure f{stage, error};
  ssize_t ignored = write(pipe_fd, &f, sizeof f);
  (void)ignored;
  _exit(127);
}

// Writes /proc/self/oom_score_adj; async-signal-safe.
void SetOomScoreAdj(const char* value) {
  if (const int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC); fd >= 0) {
    [[maybe_unused]] const ssize_t n = write(fd, value, std::strlen(value));
    close(fd);
  }
}

// Rootless podman enters the user's namespaces through a pause process it
// starts on first use. Without one (or without XDG_RUNTIME_DIR to find it)
// `podman run` forks a second client that waits for the first, and that
// outer client ends at once, exit 0, on the checkpoint signal, while the
// container is still saving its work. So the job first has `podman unshare
// true` make the user's pause process: started by the job's process once it
// has joined the job's cgroup, so that nothing the step leaves runs on
// outside the job's limits after it ends (the next job makes another pause
// process), as the user (`account`; null: gleaner is not root and already
// is the user), killed with the job's process should that die first. `argv`
// names podman by its path in root's directories. Its pid, or -1.
// Async-signal-safe.
pid_t StartPodmanPause(const Account* account, const char* home,
                       const std::vector<const char*>& programs, char* const* argv,
                       char* const* envp) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid != 0) return pid;
  if ((account != nullptr && !BecomeUser(*account)) ||
      prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != parent || chdir(home) != 0) {
    _exit(127);
  }
  // Nothing of the job's: the pause process it leaves keeps what it holds,
  // and podman run says again whatever went wrong here.
  const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0 || dup2(null_fd, 1) < 0 || dup2(null_fd, 2) < 0) _exit(127);
  ExecFirst(programs, argv, envp);
  _exit(127);
}

// Waits for StartPodmanPause's process, for at most 30 s. Async-signal-safe.
void AwaitPodmanPause(pid_t pid) {
  const struct timespec tick = {0, 20'000'000};
  for (int waited = 0; waited < 1500; ++waited) {
    const pid_t r = waitpid(pid, nullptr, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return;
    nanosleep(&tick, nullptr);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

volatile sig_atomic_t g_hangup_forwarded = 0;

// A session's first process leads the terminal's session, so a hangup (the
// client gone, or never come) signals it alone: it passes the hangup on to
// the job's process group, once, as a login shell passes it to its jobs.
void ForwardHangup(int) {
  if (g_hangup_forwarded) return;
  g_hangup_forwarded = 1;
  const int saved = errno;
  kill(0, SIGHUP);
  kill(0, SIGCONT);  // a stopped job must wake to hear it
  errno = saved;
}

// The job's first process, root's: it waits for the job and writes how it
// ended to `exit_path`, so that an agent restarted meanwhile (no longer the
// job's parent) still learns its exit status, then ends the same way. It
// ignores the signals sent to the job's process group (a session's hangup
// it passes on): only SIGKILL, which ends the job anyway, stops it.
// Async-signal-safe calls only.
[[noreturn]] void WaitAndRecord(pid_t job, const char* exit_path, bool session) {
  if (session) {
    struct sigaction forward {};
    forward.sa_handler = ForwardHangup;
    sigemptyset(&forward.sa_mask);
    forward.sa_flags = SA_RESTART;
    sigaction(SIGHUP, &forward, nullptr);
    sigset_t hangup;
    sigemptyset(&hangup);
    sigaddset(&hangup, SIGHUP);
    sigprocmask(SIG_UNBLOCK, &hangup, nullptr);  // one that came meanwhile is passed on now
  }
  // It holds nothing of gleaner's (sockets, the database, the driver), and
  // it never dumps core: its memory is gleaner's.
  CloseDescriptorsBut(-1);
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // Over its memory limit, the job's cgroup loses a process to the OOM
  // killer: never this one where the kernel lets root say so, for it looks
  // larger than most jobs (a copy of gleaner's memory) and alone knows how
  // the job ended. (The job itself is the OOM killer's first choice: below.)
  SetOomScoreAdj("-1000");
  // A copy of gleaner that never execs: named for what it is in ps and top.
  prctl(PR_SET_NAME, "gleaner-job", 0, 0, 0);
  int status = 0;
  pid_t waited;
  while ((waited = waitpid(job, &status, 0)) < 0 && errno == EINTR) {
  }
  if (waited != job) _exit(127);  // how it ended is unknown: say nothing
  char line[32];
  const bool exited = WIFEXITED(status);
  const int value = exited ? WEXITSTATUS(status) : WTERMSIG(status);
  // "exit N" or "signal N", written with no library call that allocates.
  const char* word = exited ? "exit " : "signal ";
  size_t n = 0;
  for (const char* w = word; *w != '\0'; ++w) line[n++] = *w;
  if (value >= 100) line[n++] = static_cast<char>('0' + value / 100);
  if (value >= 10) line[n++] = static_cast<char>('0' + value / 10 % 10);
  line[n++] = static_cast<char>('0' + value % 10);
  line[n++] = '\n';
  const int fd = open(exit_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) {
    [[maybe_unused]] const ssize_t written = write(fd, line, n);
    close(fd);
  }
  if (exited) _exit(value);
  signal(value, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  kill(getpid(), value);
  _exit(128 + value);
}

// How a job ended, from the file WaitAndRecord wrote; nullopt when there is
// none (the job was killed with its first process).
std::optional<JobExit> RecordedExit(const std::string& exit_path) {
  const int fd = open(exit_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char text[32] = {};
  const ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return std::nullopt;
  char word[8] = {};
  int value = 0;
  if (std::sscanf(text, "%7s %d", word, &value) != 2) return std::nullopt;
  JobExit e;
  if (std::strcmp(word, "exit") == 0) e.exit_code = value;
  if (std::strcmp(word, "signal") == 0) e.signal = value;
  return e;
}

}  // namespace

void TrimLog(const std::string& path, uint64_t max_bytes) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) <= max_bytes) return;
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, 0) == 0) {
    const std::string note = "[gleaner: this log passed " + std::to_string(max_bytes) +
                             " bytes; the " + std::to_string(st.st_size) +
                             " bytes before this line were dropped]\n";
    [[maybe_unused]] const ssize_t n = write(fd, note.data(), note.size());
  }
  close(fd);
}

namespace {

// The words for a child's failure: what it was doing, on what, and why.
std::string DescribeFailure(const ChildFailure& f, const std::string& workdir,
                            const std::string& program) {
  const std::string why = std::strerror(f.error);
  switch (f.stage) {
    case ChildStage::kCredentials:
      return "cannot switch to the user: " + why;
    case ChildStage::kWorkingDir:
      return "working directory " + workdir + ": " + why;
    case ChildStage::kExec:
      return f.error == ENOENT
                 ? "command \"" + program + "\" not found in PATH (looked up as the user)"
                 : "command \"" + program + "\": " + why;
    case ChildStage::kSetUp:
      break;
  }
  return "setting up the job's process: " + why;
}

}  // namespace

core::Status WriteHostfile(const LaunchRequest& req, std::optional<uid_t> owner, gid_t group) {
  auto fd = OpenJobLog(req.log_dir, std::to_string(req.id) + ".hosts", owner, group);
  if (!fd.ok()) return fd.status();
  // An earlier attempt's is replaced: the file is plain and singly named.
  const std::string text = HostfileText(*req.gang);
  const bool written = ftruncate(*fd, 0) == 0 &&
                       write(*fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int write_errno = errno;
  close(*fd);
  if (!written) {
    return core::Unavailable("cannot write the gang's hostfile in " + req.log_dir + ": " +
                             std::strerror(write_errno));
  }
  return core::Status::Ok();
}

core::Result<int> OpenJobLog(const std::string& log_dir, const std::string& name,
                             std::optional<uid_t> owner, gid_t group) {
  const int dir = open(log_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) {
    return core::Unavailable("cannot open the job log directory " + log_dir + ": " +
                             std::strerror(errno));
  }
  // Created here, or else an existing log of an earlier attempt: never a
  // link, and never anything but a plain file with one name. Only a file
  // this call created is given to the job's user.
  bool created = true;
  int fd = openat(dir, name.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    created = false;
    fd = openat(dir, name.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  }
  const int open_errno = errno;
  close(dir);
  if (fd < 0) {
    return core::Unavailable("cannot open job log " + log_dir + "/" + name + ": " +
                             std::strerror(open_errno));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    close(fd);
    return core::FailedPrecondition("job log " + log_dir + "/" + name +
                                    " is not a plain file of its own; remove it");
  }
  if (created && owner && fchown(fd, *owner, group) != 0) {
    // Not fatal: the log stays root's.
  }
  return fd;
}

core::Result<RunningJob> Executor::Launch(const LaunchRequest& req) {
  // Whatever goes wrong with one job's launch fails that job, never the
  // daemon: it would meet the same job again after every restart.
  try {
    return Start(req);
  } catch (const std::exception& e) {
    return core::Internal("cannot start job " + std::to_string(req.id) + ": " + e.what());
  }
}

core::Result<RunningJob> Executor::Start(const LaunchRequest& req) {
  if (running_.contains(req.id)) {
    return core::FailedPrecondition("job " + std::to_string(req.id) + " is already running");
  }
  if (req.spec.command.empty()) return core::InvalidArgument("job has no command");
  GLEANER_ASSIGN_OR_RETURN(Account account, LookUpAccount(req.uid));
  const bool root = geteuid() == 0;
  if (!root && account.uid != geteuid()) {
    return core::PermissionDenied("gleaner runs as uid " + std::to_string(geteuid()) +
                                  " and cannot start jobs as " + account.name +
                                  "; run gleaner as root to serve other users");
  }

  // The job's environment: a clean login-like one, then the spec's, then
  // what gleaner owns.
  std::map<std::string, std::string> env = {
      {"HOME", account.home},
      {"USER", account.name},
      {"LOGNAME", account.name},
      {"SHELL", account.shell.empty() ? "/bin/sh" : account.shell},
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
  };
  for (const auto& [k, v] : req.spec.env) env[k] = v;
  env["CUDA_VISIBLE_DEVICES"] = Join(req.gpus);
  env["GLEANER_JOB_ID"] = std::to_string(req.id);
  if (req.gpu_memory_cap) {
    // MPS numbers the devices as CUDA_VISIBLE_DEVICES lists them.
    const std::string mib = std::to_string(req.gpu_memory_cap->count() >> 20) + "M";
    std::string limits;
    for (size_t i = 0; i < req.gpus.size(); ++i) {
      limits += (i == 0 ? "" : ",") + std::to_string(i) + "=" + mib;
    }
    env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = limits;
  }
  const std::string hostfile = req.log_dir + "/" + std::to_string(req.id) + ".hosts";
  if (req.gang) {
    // The usual rendezvous; a variable the spec sets (its own port) wins.
    for (auto& [k, v] : GangEnvironment(*req.gang, hostfile)) env.try_emplace(k, std::move(v));
  }
  if (req.array_id) {
    env["GLEANER_ARRAY_ID"] = std::to_string(*req.array_id);
    env["GLEANER_ARRAY_TASK_ID"] = std::to_string(req.array_index);
  }
  // Whether the directory exists, and the program, are found by the child
  // as the job's user: root's view of the file system never shows. A
  // container job runs podman or apptainer from the user's home; its
  // working directory is the container's.
  std::string workdir = req.spec.working_dir.empty() ? account.home : req.spec.working_dir;
  std::vector<std::string> command = req.spec.command;
  const auto no_cgroup = [&] {
    return core::FailedPrecondition(
        "job " + std::to_string(req.id) +
        " runs in a container, and this host gives jobs no cgroup of their own: its container "
        "would outlive the job's end. Run gleaner as root on a host with cgroup v2 mounted "
        "(gleaner doctor says why there is none)");
  };
  if (req.spec.container && !cgroups_) return no_cgroup();
  if (req.spec.container) {
    GLEANER_ASSIGN_OR_RETURN(command, ContainerCommand(req, account, env));
    workdir = account.home;
  }
  const bool podman = req.spec.container && req.spec.container->sif.empty();
  const std::vector<std::string> candidates = ExecCandidates(command[0], env["PATH"]);

  std::error_code ec;
  std::filesystem::create_directories(req.log_dir, ec);
  RunningJob job;
  job.id = req.id;
  const std::optional<uid_t> owner = root ? std::optional<uid_t>(account.uid) : std::nullopt;
  // The job's stdout and stderr: its two logs, or a session's terminal.
  int out_fd = -1;
  int err_fd = -1;
  SessionTerminal terminal;
  if (req.spec.pty) {
    if (terminals_ == nullptr) {
      return core::FailedPrecondition(
          "job " + std::to_string(req.id) +
          " is an interactive session, and this daemon has no client to hand its terminal to");
    }
    GLEANER_ASSIGN_OR_RETURN(terminal,
                             OpenSessionTerminal(account.uid, SizeFromEnvironment(req.spec.env)));
    out_fd = err_fd = terminal.slave;
  } else {
    job.stdout_path = req.log_dir + "/" + std::to_string(req.id) + ".out";
    job.stderr_path = req.log_dir + "/" + std::to_string(req.id) + ".err";
    auto out_log = OpenJobLog(req.log_dir, std::to_string(req.id) + ".out", owner, account.gid);
    if (!out_log.ok()) return out_log.status();
    auto err_log = OpenJobLog(req.log_dir, std::to_string(req.id) + ".err", owner, account.gid);
    if (!err_log.ok()) {
      close(*out_log);
      return err_log.status();
    }
    out_fd = *out_log;
    err_fd = *err_log;
  }
  // Closes the parent's copies of the job's output descriptors, once.
  const auto close_outputs = [&] {
    if (req.spec.pty) {
      close(terminal.slave);
      terminal.slave = -1;
    } else {
      close(out_fd);
      close(err_fd);
    }
  };
  if (req.gang) {
    if (core::Status s = WriteHostfile(req, owner, account.gid); !s.ok()) {
      close_outputs();
      return s;
    }
  }

  // Everything the child needs, built before the fork.
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp = NullTerminated(env_strings);
  std::vector<char*> argv = NullTerminated(command);
  std::vector<const char*> programs;
  for (const std::string& c : candidates) programs.push_back(c.c_str());
  // podman itself, from root's directories (ContainerCommand), as argv[0].
  std::vector<std::string> pause_args = {command[0], "unshare", "true"};
  std::vector<char*> pause_argv = NullTerminated(pause_args);

  job.exit_path = req.log_dir + "/" + std::to_string(req.id) + ".exit";
  unlink(job.exit_path.c_str());  // an earlier attempt's
  std::string cgroup;             // empty: no cgroup for this launch
  if (cgroups_) cgroup = cgroups_->Create(req.id).value_or("");
  if (req.spec.container && cgroup.empty()) {
    close_outputs();
    return no_cgroup();
  }
  // The cgroup.procs files the job joins: its own, then those that hold it
  // to its CPUs and memory where cgroup v1 does.
  std::vector<std::string> joins;
  if (!cgroup.empty()) joins.push_back(cgroup + "/cgroup.procs");
  const HostShare share{req.spec.cpu_milli, req.spec.memory};
  if (share.cpu_milli > 0 || share.memory.count() > 0) {
    // What cannot be enforced is said where the job's user looks.
    std::string note;
    if (cgroup.empty()) {
      note =
          "gleaner: this host gives jobs no cgroup, so the job's cpus and mem are not "
          "enforced; the scheduler still counts them\n";
    } else if (auto v1 = cgroups_->limits().Apply(cgroup, share); v1.ok()) {
      joins.insert(joins.end(), v1->begin(), v1->end());
      note = cgroups_->limits().Unenforced(share);
    } else {
      note = "gleaner: the job's cpus and mem could not be set (" + v1.status().message() +
             "); they are not enforced\n";
    }
    // A session hears it on its terminal, without gleaner ever waiting on it.
    const int note_fd = req.spec.pty ? terminal.notices : err_fd;
    if (!note.empty() && write(note_fd, note.data(), note.size()) < 0) {
      // The job's stderr log is full or gone: the job itself will find out.
    }
  }
  std::vector<const char*> join_files;
  for (const std::string& f : joins) join_files.push_back(f.c_str());

  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    close_outputs();
    CloseSessionTerminal(terminal);
    RemoveCgroup(cgroup);
    return core::Unavailable("pipe: " + why);
  }
  const bool pty = req.spec.pty;
  const pid_t pid = fork();
  if (pid < 0) {
    const std::string why = std::strerror(errno);
    close_outputs();
    CloseSessionTerminal(terminal);
    close(status_pipe[0]);
    close(status_pipe[1]);
    RemoveCgroup(cgroup);
    return core::Unavailable("fork: " + why);
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only until exec.
    close(status_pipe[0]);
    // A session of its own, with no controlling terminal: a job must never
    // reach the terminal gleaner was started from (TIOCSTI would type into
    // root's shell). It also makes the child its process group's leader.
    if (setsid() < 0) ChildFail(status_pipe[1], ChildStage::kSetUp, errno);
    // A session reads its terminal, which becomes the controlling terminal
    // of this new session; any other job reads nothing.
    if (pty && ioctl(out_fd, TIOCSCTTY, 0) != 0)
      ChildFail(status_pipe[1], ChildStage::kSetUp, errno);
    const int in_fd = pty ? out_fd : open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in_fd < 0 || dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) {
      ChildFail(status_pipe[1], ChildStage::kSetUp, errno);
    }
    CloseDescriptorsBut(status_pipe[1]);
    // Deaf to the job's signals from before the job exists; the job itself
    // gets every signal back to its default below. A session's hangup is
    // held (blocked, not ignored) until its first process can pass it on.
    if (pty) {
      sigset_t hangup;
      sigemptyset(&hangup);
      sigaddset(&hangup, SIGHUP);
      sigprocmask(SIG_BLOCK, &hangup, nullptr);
    }
    for (int sig = 1; sig < NSIG; ++sig) signal(sig, sig == SIGCHLD ? SIG_DFL : SIG_IGN);
    const pid_t job_pid = fork();
    if (job_pid < 0) ChildFail(status_pipe[1], ChildStage::kSetUp, errno);
    // Each joins the job's cgroups while still privileged; without them the
    // job still runs, held by its process group alone.
    if (job_pid > 0) {
      close(status_pipe[1]);  // the exec closes the job's copy: then the parent reads EOF
      for (const char* procs : join_files) JoinCgroup(procs);
      WaitAndRecord(job_pid, job.exit_path.c_str(), pty);
    }
    for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
    // A guest on the host: when memory runs out, the kernel ends the job
    // before the owner's own work (any process may raise its own score).
    SetOomScoreAdj(kJobOomScoreAdj);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (const char* procs : join_files) JoinCgroup(procs);
    const pid_t pause = podman ? StartPodmanPause(root ? &account : nullptr, account.home.c_str(),
                                                  programs, pause_argv.data(), envp.data())
                               : -1;
    int report = status_pipe[1];
    if (root && !BecomeUser(account)) ChildFail(report, ChildStage::kCredentials, errno);
    if (chdir(workdir.c_str()) != 0) ChildFail(report, ChildStage::kWorkingDir, errno);
    if (pause > 0) {
      // The job has started, as far as gleaner waits: podman's pause takes
      // what time it takes in the job's own, never in the daemon's pass.
      if (int error = ENOENT; !AnyRunnable(programs, &error)) {
        ChildFail(report, ChildStage::kExec, error);
      }
      close(report);
      report = -1;  // a failure from here on is the job's exit status 127
      AwaitPodmanPause(pause);
    }
    ChildFail(report, ChildStage::kExec, ExecFirst(programs, argv.data(), envp.data()));
  }
  close_outputs();
  close(status_pipe[1]);
  ChildFailure failure{};
  ssize_t n;
  do {
    n = read(status_pipe[0], &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  close(status_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof failure)) {
    waitpid(pid, nullptr, 0);
    unlink(job.exit_path.c_str());
    RemoveCgroup(cgroup);
    CloseSessionTerminal(terminal);
    return core::FailedPrecondition("cannot start job " + std::to_string(req.id) + " as " +
                                    account.name + ": " +
                                    DescribeFailure(failure, workdir, command[0]));
  }
  job.pid = pid;
  job.cgroup = cgroup;
  job.started_at = clock_.Now();
  job.process_started_at = ProcessStartTime(static_cast<uint32_t>(pid));
  running_[req.id] = job;
  if (pty) {
    terminals_->Offer(req.id, account.uid, terminal.master,
                      clock_.Now() + core::TerminalHandoff::kAttachWithin);
    notices_[req.id] = Notices{terminal.notices, req.spec.grace};
  }
  return job;
}

std::optional<JobExit> Executor::EndedWhileAway(sched::JobId id, const std::string& log_dir) {
  const std::string path = log_dir + "/" + std::to_string(id) + ".exit";
  std::optional<JobExit> e = RecordedExit(path);
  unlink(path.c_str());
  if (e) e->id = id;
  return e;
}

core::Status Executor::Adopt(const JobHandle& job) {
  if (!job.pid || !job.process_started_at) {
    return core::NotFound("job " + std::to_string(job.id) + " left no process to take back");
  }
  return Adopt(job.id, *job.pid, *job.process_started_at, job.log_dir);
}

core::Status Executor::Adopt(sched::JobId id, pid_t pid, core::TimePoint process_started_at,
                             const std::string& log_dir) {
  if (pid <= 0 || ProcessStartTime(static_cast<uint32_t>(pid)) != process_started_at) {
    return core::NotFound("job " + std::to_string(id) + ": process " + std::to_string(pid) +
                          " is gone (or the pid now belongs to another process)");
  }
  RunningJob job;
  job.id = id;
  job.pid = pid;
  job.started_at = clock_.Now();
  job.process_started_at = process_started_at;
  job.adopted = true;
  job.exit_path = log_dir + "/" + std::to_string(id) + ".exit";
  if (cgroups_) job.cgroup = cgroups_->Of(pid).value_or("");
  running_[id] = job;
  return core::Status::Ok();
}

void Executor::RemoveCgroup(const std::string& path) {
  if (!path.empty()) cgroups_->Remove(path).IgnoreError();
}

void Executor::Sweep(const std::string& path) {
  if (path.empty()) return;
  if (cgroups_->Remove(path).ok()) {
    lingering_.erase(path);
    return;
  }
  JobCgroups::Kill(path).IgnoreError();  // removed on a later call, once empty
  lingering_.insert(path);
}

void Executor::SweepLeftovers() {
  if (!cgroups_) return;
  std::set<std::string> held;
  for (const auto& [id, job] : running_) held.insert(job.cgroup);
  for (const std::string& path : cgroups_->List()) {
    if (!held.contains(path)) Sweep(path);
  }
}

Executor::~Executor() {
  for (const auto& [id, n] : notices_) close(n.fd);
}

void Executor::CloseNotices(sched::JobId id) {
  const auto it = notices_.find(id);
  if (it == notices_.end()) return;
  close(it->second.fd);
  notices_.erase(it);
}

std::vector<JobExit> Executor::Reap() {
  // Sessions whose client never came: their terminal is hung up, and
  // whatever ignores that (nohup) or was stopped is ended all the same.
  if (terminals_) {
    for (int64_t id : terminals_->Expire(clock_.Now())) {
      if (!running_.contains(id)) continue;
      Tell(id, "Nobody attached to this session within " +
                   core::FormatDuration(core::TerminalHandoff::kAttachWithin) + ": it is ended.");
      Signal(id, SIGKILL).IgnoreError();
    }
  }
  for (const std::string& path : std::set<std::string>(lingering_)) Sweep(path);
  for (const auto& [id, job] : running_) {
    for (const std::string& log : {job.stdout_path, job.stderr_path}) {
      if (!log.empty()) TrimLog(log, max_log_bytes_);
    }
  }
  std::vector<JobExit> out;
  for (auto it = running_.begin(); it != running_.end();) {
    if (it->second.adopted) {
      // Not our child: gone when its pid no longer names the same process.
      if (ProcessStartTime(static_cast<uint32_t>(it->second.pid)) !=
          it->second.process_started_at) {
        std::optional<JobExit> recorded = RecordedExit(it->second.exit_path);
        unlink(it->second.exit_path.c_str());
        JobExit e = recorded.value_or(JobExit{});
        e.status_unknown = !recorded;
        e.id = it->first;
        e.at = clock_.Now();
        out.push_back(e);
        Sweep(it->second.cgroup);
        it = running_.erase(it);
      } else {
        ++it;
      }
      continue;
    }
    int status = 0;
    const pid_t r = waitpid(it->second.pid, &status, WNOHANG);
    if (r == it->second.pid) {
      JobExit e;
      e.id = it->first;
      e.at = clock_.Now();
      if (WIFEXITED(status)) e.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
      out.push_back(e);
      unlink(it->second.exit_path.c_str());
      Sweep(it->second.cgroup);
      CloseNotices(it->first);
      it = running_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

void Executor::Tell(sched::JobId id, const std::string& why) {
  if (const auto n = notices_.find(id); n != notices_.end()) NoticeOnTerminal(n->second.fd, why);
}

core::Status Executor::Signal(sched::JobId id, int signal) {
  auto it = running_.find(id);
  if (it == running_.end())
    return core::NotFound("job " + std::to_string(id) + " is not running here");
  if (const auto n = notices_.find(id); n != notices_.end()) {
    const int64_t grace_s = std::chrono::duration_cast<core::Seconds>(n->second.grace).count();
    NoticeOnTerminal(n->second.fd, signal == SIGKILL
                                       ? "This session is being ended now."
                                       : "This session must end: it will be killed in " +
                                             std::to_string(grace_s) + " s. Save your work now.");
  }
  if (kill(-it->second.pid, signal) != 0 && errno != ESRCH) {
    return core::Internal("signalling job " + std::to_string(id) + ": " + std::strerror(errno));
  }
  // An interactive shell moves itself and its jobs to process groups of
  // their own, all in the session the job's first process leads.
  if (notices_.contains(id)) {
    for (uint32_t p : ProcessesOfSession(static_cast<uint32_t>(it->second.pid))) {
      kill(static_cast<pid_t>(p), signal);
    }
  }
  // The end of a job ends all of it, in its process group or not.
  if (signal == SIGKILL && !it->second.cgroup.empty()) {
    JobCgroups::Kill(it->second.cgroup).IgnoreError();
  }
  return core::Status::Ok();
}

}  // namespace gleaner::agent
