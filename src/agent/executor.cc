#include "agent/executor.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "agent/process_info.h"

namespace gleaner::agent {
namespace {

struct Account {
  std::string name;
  uid_t uid;
  gid_t gid;
  std::string home;
  std::string shell;
  std::vector<gid_t> groups;
};

core::Result<Account> LookUp(uint32_t uid) {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? static_cast<size_t>(size) : 16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return core::NotFound("no user with uid " + std::to_string(uid) + " on this host");
  }
  Account a{found->pw_name,
            found->pw_uid,
            found->pw_gid,
            found->pw_dir,
            found->pw_shell ? found->pw_shell : "",
            {}};
  int count = 64;
  a.groups.resize(static_cast<size_t>(count));
  while (getgrouplist(a.name.c_str(), a.gid, a.groups.data(), &count) < 0) {
    a.groups.resize(static_cast<size_t>(count));
  }
  a.groups.resize(static_cast<size_t>(count));
  return a;
}

// The program to exec, found in PATH as execvp would, resolved before the
// fork (the child may only make async-signal-safe calls).
core::Result<std::string> Resolve(const std::string& program, const std::string& path) {
  if (program.find('/') != std::string::npos) return program;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string candidate = path.substr(start, end - start) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return core::NotFound("command \"" + program + "\" not found in PATH (" + path + ")");
}

std::string Join(const std::vector<core::GpuUuid>& gpus) {
  std::string out;
  for (const core::GpuUuid& g : gpus) out += (out.empty() ? "" : ",") + g.str();
  return out;
}

[[noreturn]] void ChildFail(int pipe_fd, int error) {
  // Tell the parent why, then leave without running any atexit handler.
  ssize_t ignored = write(pipe_fd, &error, sizeof error);
  (void)ignored;
  _exit(127);
}

// The job's first process, root's: it waits for the job and writes how it
// ended to `exit_path`, so that an agent restarted meanwhile (no longer the
// job's parent) still learns its exit status, then ends the same way. It
// ignores the signals sent to the job's process group: only SIGKILL, which
// ends the job anyway, stops it. Async-signal-safe calls only.
[[noreturn]] void WaitAndRecord(pid_t job, const char* exit_path) {
  // It holds nothing of gleaner's (sockets, the database, the driver), and
  // it never dumps core: its memory is gleaner's.
  close_range(3, ~0U, 0);
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
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
  const int fd = open(exit_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
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
  std::ifstream in(exit_path);
  std::string word;
  int value = 0;
  if (!(in >> word >> value)) return std::nullopt;
  JobExit e;
  if (word == "exit") e.exit_code = value;
  if (word == "signal") e.signal = value;
  return e;
}

}  // namespace

core::Result<RunningJob> Executor::Launch(const LaunchRequest& req) {
  if (running_.contains(req.id)) {
    return core::FailedPrecondition("job " + std::to_string(req.id) + " is already running");
  }
  if (req.spec.command.empty()) return core::InvalidArgument("job has no command");
  GLEANER_ASSIGN_OR_RETURN(Account account, LookUp(req.uid));
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
  if (req.array_id) {
    env["GLEANER_ARRAY_ID"] = std::to_string(*req.array_id);
    env["GLEANER_ARRAY_TASK_ID"] = std::to_string(req.array_index);
  }
  const std::string workdir = req.spec.working_dir.empty() ? account.home : req.spec.working_dir;
  if (!std::filesystem::is_directory(workdir)) {
    return core::InvalidArgument("working directory " + workdir + " does not exist");
  }
  GLEANER_ASSIGN_OR_RETURN(std::string program, Resolve(req.spec.command[0], env["PATH"]));

  std::error_code ec;
  std::filesystem::create_directories(req.log_dir, ec);
  RunningJob job;
  job.id = req.id;
  job.stdout_path = req.log_dir + "/" + std::to_string(req.id) + ".out";
  job.stderr_path = req.log_dir + "/" + std::to_string(req.id) + ".err";
  const int out_fd = open(job.stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  const int err_fd = open(job.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (out_fd < 0 || err_fd < 0) {
    if (out_fd >= 0) close(out_fd);
    if (err_fd >= 0) close(err_fd);
    return core::Unavailable("cannot create job logs in " + req.log_dir + ": " +
                             std::strerror(errno));
  }
  if (root) {  // the job's user may read its own logs
    if (fchown(out_fd, account.uid, account.gid) != 0 ||
        fchown(err_fd, account.uid, account.gid) != 0) {
      // Not fatal: the logs stay root's.
    }
  }

  // Everything the child needs, built before the fork.
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = req.spec.command;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  job.exit_path = req.log_dir + "/" + std::to_string(req.id) + ".exit";
  std::filesystem::remove(job.exit_path, ec);  // an earlier attempt's
  std::string cgroup;                          // empty: no cgroup for this launch
  if (cgroups_) cgroup = cgroups_->Create(req.id).value_or("");
  const std::string cgroup_procs = cgroup.empty() ? "" : cgroup + "/cgroup.procs";

  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) {
    close(out_fd);
    close(err_fd);
    const std::string why = std::strerror(errno);
    JobCgroups::Remove(cgroup).IgnoreError();
    return core::Unavailable("pipe: " + why);
  }
  const pid_t pid = fork();
  if (pid < 0) {
    close(out_fd);
    close(err_fd);
    close(status_pipe[0]);
    close(status_pipe[1]);
    const std::string why = std::strerror(errno);
    JobCgroups::Remove(cgroup).IgnoreError();
    return core::Unavailable("fork: " + why);
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only until exec.
    close(status_pipe[0]);
    setpgid(0, 0);
    // Join the job's cgroup while still privileged; without it the job
    // still runs, held by its process group alone.
    if (!cgroup_procs.empty()) JoinCgroup(cgroup_procs.c_str());
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) {
      ChildFail(status_pipe[1], errno);
    }
    // Deaf to the job's signals from before the job exists; the job itself
    // gets every signal back to its default below.
    for (int sig = 1; sig < NSIG; ++sig) signal(sig, sig == SIGCHLD ? SIG_DFL : SIG_IGN);
    const pid_t job_pid = fork();
    if (job_pid < 0) ChildFail(status_pipe[1], errno);
    if (job_pid > 0) {
      close(status_pipe[1]);  // the exec closes the job's copy: then the parent reads EOF
      WaitAndRecord(job_pid, job.exit_path.c_str());
    }
    for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (root) {
      if (setgroups(account.groups.size(), account.groups.data()) != 0 ||
          setgid(account.gid) != 0 || setuid(account.uid) != 0) {
        ChildFail(status_pipe[1], errno);
      }
      if (account.uid != 0 && setuid(0) == 0) ChildFail(status_pipe[1], EPERM);  // must be gone
    }
    if (chdir(workdir.c_str()) != 0) ChildFail(status_pipe[1], errno);
    execve(program.c_str(), argv.data(), envp.data());
    ChildFail(status_pipe[1], errno);
  }
  // Parent: also put the child in its group (no race with an early signal).
  setpgid(pid, pid);
  close(out_fd);
  close(err_fd);
  close(status_pipe[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(status_pipe[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  close(status_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    waitpid(pid, nullptr, 0);
    std::filesystem::remove(job.exit_path, ec);
    JobCgroups::Remove(cgroup).IgnoreError();
    return core::FailedPrecondition("cannot start job " + std::to_string(req.id) + " (" + program +
                                    " as " + account.name + "): " + std::strerror(child_errno));
  }
  job.pid = pid;
  job.cgroup = cgroup;
  job.started_at = clock_.Now();
  job.process_started_at = ProcessStartTime(static_cast<uint32_t>(pid));
  running_[req.id] = job;
  return job;
}

std::optional<JobExit> Executor::EndedWhileAway(sched::JobId id, const std::string& log_dir) {
  const std::string path = log_dir + "/" + std::to_string(id) + ".exit";
  std::optional<JobExit> e = RecordedExit(path);
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (e) e->id = id;
  return e;
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

void Executor::Sweep(const std::string& path) {
  if (path.empty()) return;
  if (JobCgroups::Remove(path).ok()) {
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

std::vector<JobExit> Executor::Reap() {
  for (const std::string& path : std::set<std::string>(lingering_)) Sweep(path);
  std::vector<JobExit> out;
  for (auto it = running_.begin(); it != running_.end();) {
    if (it->second.adopted) {
      // Not our child: gone when its pid no longer names the same process.
      if (ProcessStartTime(static_cast<uint32_t>(it->second.pid)) !=
          it->second.process_started_at) {
        std::optional<JobExit> recorded = RecordedExit(it->second.exit_path);
        std::error_code ec;
        std::filesystem::remove(it->second.exit_path, ec);
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
      std::error_code ec;
      std::filesystem::remove(it->second.exit_path, ec);
      Sweep(it->second.cgroup);
      it = running_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

core::Status Executor::Signal(sched::JobId id, int signal) {
  auto it = running_.find(id);
  if (it == running_.end())
    return core::NotFound("job " + std::to_string(id) + " is not running here");
  if (kill(-it->second.pid, signal) != 0 && errno != ESRCH) {
    return core::Internal("signalling job " + std::to_string(id) + ": " + std::strerror(errno));
  }
  // The end of a job ends all of it, in its process group or not.
  if (signal == SIGKILL && !it->second.cgroup.empty()) {
    JobCgroups::Kill(it->second.cgroup).IgnoreError();
  }
  return core::Status::Ok();
}

}  // namespace gleaner::agent
